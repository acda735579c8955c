file(REMOVE_RECURSE
  "CMakeFiles/test_lib_secure.dir/unit/test_lib_secure.c.o"
  "CMakeFiles/test_lib_secure.dir/unit/test_lib_secure.c.o.d"
  "test_lib_secure"
  "test_lib_secure.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_secure.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
