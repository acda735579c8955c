# Empty dependencies file for test_lib_session.
# This may be replaced when dependencies are built.
