# Empty dependencies file for xp_capture_json.
# This may be replaced when dependencies are built.
