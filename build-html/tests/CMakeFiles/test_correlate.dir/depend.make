# Empty dependencies file for test_correlate.
# This may be replaced when dependencies are built.
