file(REMOVE_RECURSE
  "CMakeFiles/test_lib_threads.dir/unit/test_lib_threads.c.o"
  "CMakeFiles/test_lib_threads.dir/unit/test_lib_threads.c.o.d"
  "test_lib_threads"
  "test_lib_threads.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_threads.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
