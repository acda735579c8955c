file(REMOVE_RECURSE
  "CMakeFiles/test_collect_live.dir/unit/test_collect_live.c.o"
  "CMakeFiles/test_collect_live.dir/unit/test_collect_live.c.o.d"
  "test_collect_live"
  "test_collect_live.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_collect_live.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
