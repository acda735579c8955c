# Empty dependencies file for test_correlate_perf.
# This may be replaced when dependencies are built.
