file(REMOVE_RECURSE
  "CMakeFiles/xpl_nvtx_fixture.dir/nvtx_fixture.c.o"
  "CMakeFiles/xpl_nvtx_fixture.dir/nvtx_fixture.c.o.d"
  "CMakeFiles/xpl_nvtx_fixture.dir/nvtx_loader.c.o"
  "CMakeFiles/xpl_nvtx_fixture.dir/nvtx_loader.c.o.d"
  "nvtx_fixture"
  "nvtx_fixture.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpl_nvtx_fixture.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
