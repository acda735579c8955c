# Empty dependencies file for test_capture_export.
# This may be replaced when dependencies are built.
