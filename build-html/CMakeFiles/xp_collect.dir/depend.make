# Empty dependencies file for xp_collect.
# This may be replaced when dependencies are built.
