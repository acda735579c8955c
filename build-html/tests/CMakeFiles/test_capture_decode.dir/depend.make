# Empty dependencies file for test_capture_decode.
# This may be replaced when dependencies are built.
