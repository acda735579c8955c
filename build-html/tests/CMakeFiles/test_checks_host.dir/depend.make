# Empty dependencies file for test_checks_host.
# This may be replaced when dependencies are built.
