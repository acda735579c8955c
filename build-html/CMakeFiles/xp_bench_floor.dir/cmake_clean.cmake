file(REMOVE_RECURSE
  "CMakeFiles/xp_bench_floor.dir/bench/xp_floor.c.o"
  "CMakeFiles/xp_bench_floor.dir/bench/xp_floor.c.o.d"
  "bench/xp_bench_floor"
  "bench/xp_bench_floor.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_bench_floor.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
