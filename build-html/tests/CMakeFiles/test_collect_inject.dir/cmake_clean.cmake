file(REMOVE_RECURSE
  "CMakeFiles/test_collect_inject.dir/unit/test_collect_inject.c.o"
  "CMakeFiles/test_collect_inject.dir/unit/test_collect_inject.c.o.d"
  "test_collect_inject"
  "test_collect_inject.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_collect_inject.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
