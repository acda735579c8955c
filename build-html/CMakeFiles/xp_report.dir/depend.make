# Empty dependencies file for xp_report.
# This may be replaced when dependencies are built.
