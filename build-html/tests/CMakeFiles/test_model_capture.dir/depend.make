# Empty dependencies file for test_model_capture.
# This may be replaced when dependencies are built.
