# Empty dependencies file for xpd_cudart12.
# This may be replaced when dependencies are built.
