file(REMOVE_RECURSE
  "CMakeFiles/xp_process.dir/src/process/children.c.o"
  "CMakeFiles/xp_process.dir/src/process/children.c.o.d"
  "CMakeFiles/xp_process.dir/src/process/identity.c.o"
  "CMakeFiles/xp_process.dir/src/process/identity.c.o.d"
  "CMakeFiles/xp_process.dir/src/process/namespaces.c.o"
  "CMakeFiles/xp_process.dir/src/process/namespaces.c.o.d"
  "CMakeFiles/xp_process.dir/src/process/perf_map_file.c.o"
  "CMakeFiles/xp_process.dir/src/process/perf_map_file.c.o.d"
  "CMakeFiles/xp_process.dir/src/process/procfs.c.o"
  "CMakeFiles/xp_process.dir/src/process/procfs.c.o.d"
  "libxp_process.a"
  "libxp_process.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_process.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
