file(REMOVE_RECURSE
  "CMakeFiles/test_selector.dir/unit/test_selector.c.o"
  "CMakeFiles/test_selector.dir/unit/test_selector.c.o.d"
  "test_selector"
  "test_selector.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_selector.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
