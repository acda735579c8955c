# Empty dependencies file for test_lib_secure.
# This may be replaced when dependencies are built.
