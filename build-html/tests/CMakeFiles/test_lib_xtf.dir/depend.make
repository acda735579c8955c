# Empty dependencies file for test_lib_xtf.
# This may be replaced when dependencies are built.
