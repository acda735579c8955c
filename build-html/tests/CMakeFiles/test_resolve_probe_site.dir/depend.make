# Empty dependencies file for test_resolve_probe_site.
# This may be replaced when dependencies are built.
