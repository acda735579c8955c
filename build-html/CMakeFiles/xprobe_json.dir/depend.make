# Empty dependencies file for xprobe_json.
# This may be replaced when dependencies are built.
