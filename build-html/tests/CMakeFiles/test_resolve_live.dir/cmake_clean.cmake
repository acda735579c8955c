file(REMOVE_RECURSE
  "CMakeFiles/test_resolve_live.dir/unit/test_resolve_live.c.o"
  "CMakeFiles/test_resolve_live.dir/unit/test_resolve_live.c.o.d"
  "test_resolve_live"
  "test_resolve_live.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_resolve_live.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
