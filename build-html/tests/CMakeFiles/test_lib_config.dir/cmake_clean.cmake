file(REMOVE_RECURSE
  "CMakeFiles/test_lib_config.dir/unit/test_lib_config.c.o"
  "CMakeFiles/test_lib_config.dir/unit/test_lib_config.c.o.d"
  "test_lib_config"
  "test_lib_config.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_config.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
