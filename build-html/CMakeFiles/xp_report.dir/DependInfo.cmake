
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/build-html/gen/html_assets.gen.c" "CMakeFiles/xp_report.dir/gen/html_assets.gen.c.o" "gcc" "CMakeFiles/xp_report.dir/gen/html_assets.gen.c.o.d"
  "/work/main/src/report/render_aggregate.c" "CMakeFiles/xp_report.dir/src/report/render_aggregate.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_aggregate.c.o.d"
  "/work/main/src/report/render_bars.c" "CMakeFiles/xp_report.dir/src/report/render_bars.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_bars.c.o.d"
  "/work/main/src/report/render_common.c" "CMakeFiles/xp_report.dir/src/report/render_common.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_common.c.o.d"
  "/work/main/src/report/render_cpu_sample.c" "CMakeFiles/xp_report.dir/src/report/render_cpu_sample.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_cpu_sample.c.o.d"
  "/work/main/src/report/render_discover.c" "CMakeFiles/xp_report.dir/src/report/render_discover.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_discover.c.o.d"
  "/work/main/src/report/render_doctor.c" "CMakeFiles/xp_report.dir/src/report/render_doctor.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_doctor.c.o.d"
  "/work/main/src/report/render_endpoint_list.c" "CMakeFiles/xp_report.dir/src/report/render_endpoint_list.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_endpoint_list.c.o.d"
  "/work/main/src/report/render_histogram.c" "CMakeFiles/xp_report.dir/src/report/render_histogram.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_histogram.c.o.d"
  "/work/main/src/report/render_html.c" "CMakeFiles/xp_report.dir/src/report/render_html.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_html.c.o.d"
  "/work/main/src/report/render_measurement.c" "CMakeFiles/xp_report.dir/src/report/render_measurement.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_measurement.c.o.d"
  "/work/main/src/report/render_syscall_agg.c" "CMakeFiles/xp_report.dir/src/report/render_syscall_agg.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_syscall_agg.c.o.d"
  "/work/main/src/report/render_validate.c" "CMakeFiles/xp_report.dir/src/report/render_validate.c.o" "gcc" "CMakeFiles/xp_report.dir/src/report/render_validate.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_collect.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_checks.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_correlate.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_capture.dir/DependInfo.cmake"
  "/work/main/build-html/lib/CMakeFiles/xtf_reader.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_resolve.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_process.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_selector.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
