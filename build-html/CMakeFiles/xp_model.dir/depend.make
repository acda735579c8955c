# Empty dependencies file for xp_model.
# This may be replaced when dependencies are built.
