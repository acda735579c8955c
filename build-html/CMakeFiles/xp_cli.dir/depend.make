# Empty dependencies file for xp_cli.
# This may be replaced when dependencies are built.
