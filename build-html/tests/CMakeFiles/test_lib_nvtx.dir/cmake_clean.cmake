file(REMOVE_RECURSE
  "CMakeFiles/test_lib_nvtx.dir/unit/test_lib_nvtx.c.o"
  "CMakeFiles/test_lib_nvtx.dir/unit/test_lib_nvtx.c.o.d"
  "test_lib_nvtx"
  "test_lib_nvtx.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_nvtx.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
