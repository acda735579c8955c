# Empty dependencies file for xpd_cupti13.
# This may be replaced when dependencies are built.
