file(REMOVE_RECURSE
  "CMakeFiles/test_model_capture.dir/unit/test_model_capture.c.o"
  "CMakeFiles/test_model_capture.dir/unit/test_model_capture.c.o.d"
  "test_model_capture"
  "test_model_capture.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_model_capture.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
