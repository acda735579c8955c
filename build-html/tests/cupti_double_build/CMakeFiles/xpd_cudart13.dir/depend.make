# Empty dependencies file for xpd_cudart13.
# This may be replaced when dependencies are built.
