file(REMOVE_RECURSE
  "CMakeFiles/test_lib_crash.dir/unit/test_lib_crash.c.o"
  "CMakeFiles/test_lib_crash.dir/unit/test_lib_crash.c.o.d"
  "test_lib_crash"
  "test_lib_crash.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_crash.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
