# Empty dependencies file for test_capture_agentfile.
# This may be replaced when dependencies are built.
