# Empty dependencies file for test_collect_cpu.
# This may be replaced when dependencies are built.
