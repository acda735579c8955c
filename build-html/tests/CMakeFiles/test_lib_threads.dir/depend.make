# Empty dependencies file for test_lib_threads.
# This may be replaced when dependencies are built.
