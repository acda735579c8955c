file(REMOVE_RECURSE
  "CMakeFiles/test_capture_agentfile.dir/unit/test_capture_agentfile.c.o"
  "CMakeFiles/test_capture_agentfile.dir/unit/test_capture_agentfile.c.o.d"
  "test_capture_agentfile"
  "test_capture_agentfile.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_capture_agentfile.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
