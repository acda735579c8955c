file(REMOVE_RECURSE
  "CMakeFiles/xp_correlate.dir/src/correlate/correlate.c.o"
  "CMakeFiles/xp_correlate.dir/src/correlate/correlate.c.o.d"
  "CMakeFiles/xp_correlate.dir/src/correlate/keymap.c.o"
  "CMakeFiles/xp_correlate.dir/src/correlate/keymap.c.o.d"
  "CMakeFiles/xp_correlate.dir/src/correlate/latency_view.c.o"
  "CMakeFiles/xp_correlate.dir/src/correlate/latency_view.c.o.d"
  "CMakeFiles/xp_correlate.dir/src/correlate/pairing.c.o"
  "CMakeFiles/xp_correlate.dir/src/correlate/pairing.c.o.d"
  "CMakeFiles/xp_correlate.dir/src/correlate/policy.c.o"
  "CMakeFiles/xp_correlate.dir/src/correlate/policy.c.o.d"
  "libxp_correlate.a"
  "libxp_correlate.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_correlate.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
