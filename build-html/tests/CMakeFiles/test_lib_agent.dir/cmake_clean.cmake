file(REMOVE_RECURSE
  "CMakeFiles/test_lib_agent.dir/unit/test_lib_agent.c.o"
  "CMakeFiles/test_lib_agent.dir/unit/test_lib_agent.c.o.d"
  "test_lib_agent"
  "test_lib_agent.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_lib_agent.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
