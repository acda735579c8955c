# Empty dependencies file for test_process_identity.
# This may be replaced when dependencies are built.
