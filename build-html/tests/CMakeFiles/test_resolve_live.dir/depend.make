# Empty dependencies file for test_resolve_live.
# This may be replaced when dependencies are built.
