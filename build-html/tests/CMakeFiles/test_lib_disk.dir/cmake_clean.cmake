file(REMOVE_RECURSE
  "CMakeFiles/test_lib_disk.dir/unit/test_lib_disk.c.o"
  "CMakeFiles/test_lib_disk.dir/unit/test_lib_disk.c.o.d"
  "test_lib_disk"
  "test_lib_disk.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_disk.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
