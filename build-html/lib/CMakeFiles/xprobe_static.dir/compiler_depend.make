# Empty compiler generated dependencies file for xprobe_static.
# This may be replaced when dependencies are built.
