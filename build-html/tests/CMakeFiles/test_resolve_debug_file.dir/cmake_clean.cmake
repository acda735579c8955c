file(REMOVE_RECURSE
  "CMakeFiles/test_resolve_debug_file.dir/unit/test_resolve_debug_file.c.o"
  "CMakeFiles/test_resolve_debug_file.dir/unit/test_resolve_debug_file.c.o.d"
  "test_resolve_debug_file"
  "test_resolve_debug_file.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_resolve_debug_file.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
