file(REMOVE_RECURSE
  "CMakeFiles/test_collect_agent.dir/unit/test_collect_agent.c.o"
  "CMakeFiles/test_collect_agent.dir/unit/test_collect_agent.c.o.d"
  "test_collect_agent"
  "test_collect_agent.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_collect_agent.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
