# Empty dependencies file for xp_selector.
# This may be replaced when dependencies are built.
