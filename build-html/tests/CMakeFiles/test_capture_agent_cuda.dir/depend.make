# Empty dependencies file for test_capture_agent_cuda.
# This may be replaced when dependencies are built.
