# Empty dependencies file for test_lib_config.
# This may be replaced when dependencies are built.
