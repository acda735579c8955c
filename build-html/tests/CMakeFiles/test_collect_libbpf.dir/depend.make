# Empty dependencies file for test_collect_libbpf.
# This may be replaced when dependencies are built.
