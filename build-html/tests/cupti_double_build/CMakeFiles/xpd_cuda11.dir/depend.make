# Empty dependencies file for xpd_cuda11.
# This may be replaced when dependencies are built.
