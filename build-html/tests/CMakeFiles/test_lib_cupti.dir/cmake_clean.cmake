file(REMOVE_RECURSE
  "CMakeFiles/test_lib_cupti.dir/unit/test_lib_cupti.c.o"
  "CMakeFiles/test_lib_cupti.dir/unit/test_lib_cupti.c.o.d"
  "test_lib_cupti"
  "test_lib_cupti.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_cupti.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
