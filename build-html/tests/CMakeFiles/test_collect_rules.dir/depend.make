# Empty dependencies file for test_collect_rules.
# This may be replaced when dependencies are built.
