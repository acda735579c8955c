file(REMOVE_RECURSE
  "CMakeFiles/test_capture_fastpath.dir/unit/test_capture_fastpath.c.o"
  "CMakeFiles/test_capture_fastpath.dir/unit/test_capture_fastpath.c.o.d"
  "test_capture_fastpath"
  "test_capture_fastpath.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_capture_fastpath.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
