# Empty dependencies file for test_lib_agent.
# This may be replaced when dependencies are built.
