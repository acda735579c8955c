file(REMOVE_RECURSE
  "CMakeFiles/test_capture_agent_agg.dir/unit/test_capture_agent_agg.c.o"
  "CMakeFiles/test_capture_agent_agg.dir/unit/test_capture_agent_agg.c.o.d"
  "test_capture_agent_agg"
  "test_capture_agent_agg.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_capture_agent_agg.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
