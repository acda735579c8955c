# Empty dependencies file for xpd_cupti12.
# This may be replaced when dependencies are built.
