# Empty dependencies file for xtf_reader.
# This may be replaced when dependencies are built.
