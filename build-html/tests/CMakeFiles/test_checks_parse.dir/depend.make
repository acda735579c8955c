# Empty dependencies file for test_checks_parse.
# This may be replaced when dependencies are built.
