file(REMOVE_RECURSE
  "CMakeFiles/test_capture_agent.dir/unit/test_capture_agent.c.o"
  "CMakeFiles/test_capture_agent.dir/unit/test_capture_agent.c.o.d"
  "test_capture_agent"
  "test_capture_agent.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_capture_agent.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
