# Empty dependencies file for xpl_objects.
# This may be replaced when dependencies are built.
