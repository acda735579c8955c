file(REMOVE_RECURSE
  "CMakeFiles/test_lib_profile.dir/unit/test_lib_profile.c.o"
  "CMakeFiles/test_lib_profile.dir/unit/test_lib_profile.c.o.d"
  "test_lib_profile"
  "test_lib_profile.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_profile.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
