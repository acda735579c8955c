# Empty dependencies file for test_collect_live.
# This may be replaced when dependencies are built.
