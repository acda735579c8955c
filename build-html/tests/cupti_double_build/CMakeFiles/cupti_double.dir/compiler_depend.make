# Empty custom commands generated dependencies file for cupti_double.
# This may be replaced when dependencies are built.
