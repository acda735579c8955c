file(REMOVE_RECURSE
  "CMakeFiles/xp_report.dir/gen/html_assets.gen.c.o"
  "CMakeFiles/xp_report.dir/gen/html_assets.gen.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_aggregate.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_aggregate.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_bars.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_bars.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_common.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_common.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_cpu_sample.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_cpu_sample.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_discover.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_discover.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_doctor.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_doctor.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_endpoint_list.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_endpoint_list.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_histogram.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_histogram.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_html.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_html.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_measurement.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_measurement.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_syscall_agg.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_syscall_agg.c.o.d"
  "CMakeFiles/xp_report.dir/src/report/render_validate.c.o"
  "CMakeFiles/xp_report.dir/src/report/render_validate.c.o.d"
  "gen/html_assets.gen.c"
  "libxp_report.a"
  "libxp_report.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_report.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
