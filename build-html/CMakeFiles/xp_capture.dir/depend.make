# Empty dependencies file for xp_capture.
# This may be replaced when dependencies are built.
