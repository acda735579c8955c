file(REMOVE_RECURSE
  "CMakeFiles/xp_selector.dir/gen/syscall_table.gen.c.o"
  "CMakeFiles/xp_selector.dir/gen/syscall_table.gen.c.o.d"
  "CMakeFiles/xp_selector.dir/src/selector/match.c.o"
  "CMakeFiles/xp_selector.dir/src/selector/match.c.o.d"
  "CMakeFiles/xp_selector.dir/src/selector/name_filter.c.o"
  "CMakeFiles/xp_selector.dir/src/selector/name_filter.c.o.d"
  "CMakeFiles/xp_selector.dir/src/selector/selector.c.o"
  "CMakeFiles/xp_selector.dir/src/selector/selector.c.o.d"
  "CMakeFiles/xp_selector.dir/src/selector/syscall_table.c.o"
  "CMakeFiles/xp_selector.dir/src/selector/syscall_table.c.o.d"
  "gen/syscall_table.gen.c"
  "libxp_selector.a"
  "libxp_selector.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_selector.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
