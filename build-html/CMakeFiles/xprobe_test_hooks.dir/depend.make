# Empty dependencies file for xprobe_test_hooks.
# This may be replaced when dependencies are built.
