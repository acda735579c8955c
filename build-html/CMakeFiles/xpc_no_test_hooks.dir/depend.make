# Empty dependencies file for xpc_no_test_hooks.
# This may be replaced when dependencies are built.
