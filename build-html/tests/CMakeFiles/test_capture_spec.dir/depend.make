# Empty dependencies file for test_capture_spec.
# This may be replaced when dependencies are built.
