# Empty dependencies file for xpl_nvtx_abi_check.
# This may be replaced when dependencies are built.
