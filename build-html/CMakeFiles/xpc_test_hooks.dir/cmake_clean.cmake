file(REMOVE_RECURSE
  "CMakeFiles/xpc_test_hooks.dir/common/test_hooks.c.o"
  "CMakeFiles/xpc_test_hooks.dir/common/test_hooks.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpc_test_hooks.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
