# Empty dependencies file for xpl_nvtx_fixture.
# This may be replaced when dependencies are built.
