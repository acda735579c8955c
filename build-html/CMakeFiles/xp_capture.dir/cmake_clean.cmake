file(REMOVE_RECURSE
  "CMakeFiles/xp_capture.dir/src/capture/agent_sink.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/agent_sink.c.o.d"
  "CMakeFiles/xp_capture.dir/src/capture/decode_agent.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/decode_agent.c.o.d"
  "CMakeFiles/xp_capture.dir/src/capture/decode_agent_agg.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/decode_agent_agg.c.o.d"
  "CMakeFiles/xp_capture.dir/src/capture/decode_xtf.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/decode_xtf.c.o.d"
  "CMakeFiles/xp_capture.dir/src/capture/export.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/export.c.o.d"
  "CMakeFiles/xp_capture.dir/src/capture/input.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/input.c.o.d"
  "CMakeFiles/xp_capture.dir/src/capture/json_api.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/json_api.c.o.d"
  "CMakeFiles/xp_capture.dir/src/capture/record_events.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/record_events.c.o.d"
  "CMakeFiles/xp_capture.dir/src/capture/spec.c.o"
  "CMakeFiles/xp_capture.dir/src/capture/spec.c.o.d"
  "libxp_capture.a"
  "libxp_capture.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_capture.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
