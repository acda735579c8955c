# Empty dependencies file for xpd_cuda12.
# This may be replaced when dependencies are built.
