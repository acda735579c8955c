file(REMOVE_RECURSE
  "CMakeFiles/test_capture_decode.dir/unit/test_capture_decode.c.o"
  "CMakeFiles/test_capture_decode.dir/unit/test_capture_decode.c.o.d"
  "test_capture_decode"
  "test_capture_decode.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_capture_decode.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
