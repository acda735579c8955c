# Empty dependencies file for xp_cmd.
# This may be replaced when dependencies are built.
