file(REMOVE_RECURSE
  "CMakeFiles/test_lib_xtf.dir/unit/test_lib_xtf.c.o"
  "CMakeFiles/test_lib_xtf.dir/unit/test_lib_xtf.c.o.d"
  "test_lib_xtf"
  "test_lib_xtf.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_xtf.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
