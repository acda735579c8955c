# Empty dependencies file for xpc.
# This may be replaced when dependencies are built.
