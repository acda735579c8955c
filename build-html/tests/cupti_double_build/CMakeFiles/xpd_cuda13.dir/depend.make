# Empty dependencies file for xpd_cuda13.
# This may be replaced when dependencies are built.
