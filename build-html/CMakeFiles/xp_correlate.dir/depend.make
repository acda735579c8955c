# Empty dependencies file for xp_correlate.
# This may be replaced when dependencies are built.
