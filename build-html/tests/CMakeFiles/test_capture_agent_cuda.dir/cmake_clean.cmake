file(REMOVE_RECURSE
  "CMakeFiles/test_capture_agent_cuda.dir/unit/test_capture_agent_cuda.c.o"
  "CMakeFiles/test_capture_agent_cuda.dir/unit/test_capture_agent_cuda.c.o.d"
  "test_capture_agent_cuda"
  "test_capture_agent_cuda.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_capture_agent_cuda.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
