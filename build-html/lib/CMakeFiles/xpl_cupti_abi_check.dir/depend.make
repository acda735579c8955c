# Empty dependencies file for xpl_cupti_abi_check.
# This may be replaced when dependencies are built.
