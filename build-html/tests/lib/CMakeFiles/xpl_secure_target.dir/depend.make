# Empty dependencies file for xpl_secure_target.
# This may be replaced when dependencies are built.
