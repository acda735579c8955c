file(REMOVE_RECURSE
  "CMakeFiles/xp_bench_runstat.dir/bench/xp_runstat.c.o"
  "CMakeFiles/xp_bench_runstat.dir/bench/xp_runstat.c.o.d"
  "bench/xp_bench_runstat"
  "bench/xp_bench_runstat.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_bench_runstat.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
