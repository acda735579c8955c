# Empty dependencies file for test_lib_cupti.
# This may be replaced when dependencies are built.
