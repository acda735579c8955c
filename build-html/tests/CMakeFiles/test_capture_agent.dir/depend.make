# Empty dependencies file for test_capture_agent.
# This may be replaced when dependencies are built.
