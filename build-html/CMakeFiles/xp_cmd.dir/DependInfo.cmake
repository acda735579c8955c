
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/cmd/cmd_discover.c" "CMakeFiles/xp_cmd.dir/src/cmd/cmd_discover.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/cmd_discover.c.o.d"
  "/work/main/src/cmd/cmd_doctor.c" "CMakeFiles/xp_cmd.dir/src/cmd/cmd_doctor.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/cmd_doctor.c.o.d"
  "/work/main/src/cmd/cmd_validate.c" "CMakeFiles/xp_cmd.dir/src/cmd/cmd_validate.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/cmd_validate.c.o.d"
  "/work/main/src/cmd/histogram.c" "CMakeFiles/xp_cmd.dir/src/cmd/histogram.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/histogram.c.o.d"
  "/work/main/src/cmd/inventory.c" "CMakeFiles/xp_cmd.dir/src/cmd/inventory.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/inventory.c.o.d"
  "/work/main/src/cmd/measure.c" "CMakeFiles/xp_cmd.dir/src/cmd/measure.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/measure.c.o.d"
  "/work/main/src/cmd/measure_aggregate.c" "CMakeFiles/xp_cmd.dir/src/cmd/measure_aggregate.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/measure_aggregate.c.o.d"
  "/work/main/src/cmd/measure_cpu_sample.c" "CMakeFiles/xp_cmd.dir/src/cmd/measure_cpu_sample.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/measure_cpu_sample.c.o.d"
  "/work/main/src/cmd/measure_live.c" "CMakeFiles/xp_cmd.dir/src/cmd/measure_live.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/measure_live.c.o.d"
  "/work/main/src/cmd/measure_syscall_agg.c" "CMakeFiles/xp_cmd.dir/src/cmd/measure_syscall_agg.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/measure_syscall_agg.c.o.d"
  "/work/main/src/cmd/report_out.c" "CMakeFiles/xp_cmd.dir/src/cmd/report_out.c.o" "gcc" "CMakeFiles/xp_cmd.dir/src/cmd/report_out.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_report.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_collect.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_capture.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_correlate.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_checks.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_resolve.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_process.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_selector.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_cli.dir/DependInfo.cmake"
  "/work/main/build-html/lib/CMakeFiles/xtf_reader.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
