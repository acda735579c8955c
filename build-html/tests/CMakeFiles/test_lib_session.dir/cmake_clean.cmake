file(REMOVE_RECURSE
  "CMakeFiles/test_lib_session.dir/unit/test_lib_session.c.o"
  "CMakeFiles/test_lib_session.dir/unit/test_lib_session.c.o.d"
  "test_lib_session"
  "test_lib_session.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_session.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
