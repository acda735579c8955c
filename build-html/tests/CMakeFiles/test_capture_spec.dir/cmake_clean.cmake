file(REMOVE_RECURSE
  "CMakeFiles/test_capture_spec.dir/unit/test_capture_spec.c.o"
  "CMakeFiles/test_capture_spec.dir/unit/test_capture_spec.c.o.d"
  "test_capture_spec"
  "test_capture_spec.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_capture_spec.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
