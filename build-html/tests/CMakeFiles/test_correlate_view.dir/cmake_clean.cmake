file(REMOVE_RECURSE
  "CMakeFiles/test_correlate_view.dir/unit/test_correlate_view.c.o"
  "CMakeFiles/test_correlate_view.dir/unit/test_correlate_view.c.o.d"
  "test_correlate_view"
  "test_correlate_view.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_correlate_view.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
