# Empty dependencies file for test_capture_agent_agg.
# This may be replaced when dependencies are built.
