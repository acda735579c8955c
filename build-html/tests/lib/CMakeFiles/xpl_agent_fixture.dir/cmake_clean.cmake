file(REMOVE_RECURSE
  "CMakeFiles/xpl_agent_fixture.dir/agent_fixture.c.o"
  "CMakeFiles/xpl_agent_fixture.dir/agent_fixture.c.o.d"
  "CMakeFiles/xpl_agent_fixture.dir/nvtx_loader.c.o"
  "CMakeFiles/xpl_agent_fixture.dir/nvtx_loader.c.o.d"
  "agent_fixture"
  "agent_fixture.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpl_agent_fixture.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
