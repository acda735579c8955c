# Empty dependencies file for test_capture_fastpath.
# This may be replaced when dependencies are built.
