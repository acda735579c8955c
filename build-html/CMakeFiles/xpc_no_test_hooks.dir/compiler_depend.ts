# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for xpc_no_test_hooks.
