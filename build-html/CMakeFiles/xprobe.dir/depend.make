# Empty dependencies file for xprobe.
# This may be replaced when dependencies are built.
