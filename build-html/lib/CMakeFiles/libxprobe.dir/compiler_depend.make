# Empty compiler generated dependencies file for libxprobe.
# This may be replaced when dependencies are built.
