file(REMOVE_RECURSE
  "CMakeFiles/test_collect_histogram.dir/unit/test_collect_histogram.c.o"
  "CMakeFiles/test_collect_histogram.dir/unit/test_collect_histogram.c.o.d"
  "test_collect_histogram"
  "test_collect_histogram.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_collect_histogram.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
