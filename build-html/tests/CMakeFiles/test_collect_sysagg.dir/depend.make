# Empty dependencies file for test_collect_sysagg.
# This may be replaced when dependencies are built.
