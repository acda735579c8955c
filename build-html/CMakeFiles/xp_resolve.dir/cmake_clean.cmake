file(REMOVE_RECURSE
  "CMakeFiles/xp_resolve.dir/src/resolve/debug_file.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/debug_file.c.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/demangle.cc.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/demangle.cc.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/endpoint_list.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/endpoint_list.c.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/insn.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/insn.c.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/probe_site.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/probe_site.c.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/resolve.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/resolve.c.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/target_files.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/target_files.c.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/tracefs.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/tracefs.c.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/usdt.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/usdt.c.o.d"
  "CMakeFiles/xp_resolve.dir/src/resolve/xelf.c.o"
  "CMakeFiles/xp_resolve.dir/src/resolve/xelf.c.o.d"
  "libxp_resolve.a"
  "libxp_resolve.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C CXX)
  include(CMakeFiles/xp_resolve.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
