file(REMOVE_RECURSE
  "CMakeFiles/xp_cmd.dir/src/cmd/cmd_discover.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/cmd_discover.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/cmd_doctor.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/cmd_doctor.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/cmd_validate.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/cmd_validate.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/histogram.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/histogram.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/inventory.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/inventory.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure_aggregate.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure_aggregate.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure_cpu_sample.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure_cpu_sample.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure_live.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure_live.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure_syscall_agg.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/measure_syscall_agg.c.o.d"
  "CMakeFiles/xp_cmd.dir/src/cmd/report_out.c.o"
  "CMakeFiles/xp_cmd.dir/src/cmd/report_out.c.o.d"
  "libxp_cmd.a"
  "libxp_cmd.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_cmd.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
