# Empty dependencies file for xp_checks.
# This may be replaced when dependencies are built.
