file(REMOVE_RECURSE
  "CMakeFiles/test_correlate_perf.dir/unit/test_correlate_perf.c.o"
  "CMakeFiles/test_correlate_perf.dir/unit/test_correlate_perf.c.o.d"
  "test_correlate_perf"
  "test_correlate_perf.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_correlate_perf.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
