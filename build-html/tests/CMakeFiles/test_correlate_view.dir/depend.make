# Empty dependencies file for test_correlate_view.
# This may be replaced when dependencies are built.
