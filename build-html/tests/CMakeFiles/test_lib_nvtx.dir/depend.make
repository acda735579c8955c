# Empty dependencies file for test_lib_nvtx.
# This may be replaced when dependencies are built.
