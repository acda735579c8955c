# Empty dependencies file for test_lib_crash.
# This may be replaced when dependencies are built.
