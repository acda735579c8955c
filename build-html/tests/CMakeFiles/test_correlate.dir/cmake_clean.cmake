file(REMOVE_RECURSE
  "CMakeFiles/test_correlate.dir/unit/test_correlate.c.o"
  "CMakeFiles/test_correlate.dir/unit/test_correlate.c.o.d"
  "test_correlate"
  "test_correlate.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_correlate.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
