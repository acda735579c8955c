# Empty dependencies file for test_resolve_insn.
# This may be replaced when dependencies are built.
