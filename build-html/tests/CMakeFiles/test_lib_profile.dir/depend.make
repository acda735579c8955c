# Empty dependencies file for test_lib_profile.
# This may be replaced when dependencies are built.
