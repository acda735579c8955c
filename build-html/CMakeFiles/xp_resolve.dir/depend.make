# Empty dependencies file for xp_resolve.
# This may be replaced when dependencies are built.
