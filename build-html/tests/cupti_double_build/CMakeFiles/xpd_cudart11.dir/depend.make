# Empty dependencies file for xpd_cudart11.
# This may be replaced when dependencies are built.
