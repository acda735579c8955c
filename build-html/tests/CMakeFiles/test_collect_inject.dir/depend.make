# Empty dependencies file for test_collect_inject.
# This may be replaced when dependencies are built.
