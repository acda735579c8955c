# Empty dependencies file for test_resolve_debug_file.
# This may be replaced when dependencies are built.
