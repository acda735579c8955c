# Empty dependencies file for test_collect_histogram.
# This may be replaced when dependencies are built.
