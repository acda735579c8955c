# Empty dependencies file for xp_process.
# This may be replaced when dependencies are built.
