# Empty dependencies file for test_lib_disk.
# This may be replaced when dependencies are built.
