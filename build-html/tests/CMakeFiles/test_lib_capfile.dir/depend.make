# Empty dependencies file for test_lib_capfile.
# This may be replaced when dependencies are built.
