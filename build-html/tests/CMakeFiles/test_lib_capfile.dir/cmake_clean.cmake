file(REMOVE_RECURSE
  "CMakeFiles/test_lib_capfile.dir/unit/test_lib_capfile.c.o"
  "CMakeFiles/test_lib_capfile.dir/unit/test_lib_capfile.c.o.d"
  "test_lib_capfile"
  "test_lib_capfile.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_capfile.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
