# Empty dependencies file for xpl_agent_fixture.
# This may be replaced when dependencies are built.
