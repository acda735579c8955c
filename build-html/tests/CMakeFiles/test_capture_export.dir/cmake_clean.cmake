file(REMOVE_RECURSE
  "CMakeFiles/test_capture_export.dir/unit/test_capture_export.c.o"
  "CMakeFiles/test_capture_export.dir/unit/test_capture_export.c.o.d"
  "test_capture_export"
  "test_capture_export.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_capture_export.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
