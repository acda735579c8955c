# Empty dependencies file for xpl_crash_target.
# This may be replaced when dependencies are built.
