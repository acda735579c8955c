# Empty dependencies file for test_collect_agent.
# This may be replaced when dependencies are built.
