
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/capture/agent_sink.c" "CMakeFiles/xp_capture.dir/src/capture/agent_sink.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/agent_sink.c.o.d"
  "/work/main/src/capture/decode_agent.c" "CMakeFiles/xp_capture.dir/src/capture/decode_agent.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/decode_agent.c.o.d"
  "/work/main/src/capture/decode_agent_agg.c" "CMakeFiles/xp_capture.dir/src/capture/decode_agent_agg.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/decode_agent_agg.c.o.d"
  "/work/main/src/capture/decode_xtf.c" "CMakeFiles/xp_capture.dir/src/capture/decode_xtf.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/decode_xtf.c.o.d"
  "/work/main/src/capture/export.c" "CMakeFiles/xp_capture.dir/src/capture/export.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/export.c.o.d"
  "/work/main/src/capture/input.c" "CMakeFiles/xp_capture.dir/src/capture/input.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/input.c.o.d"
  "/work/main/src/capture/json_api.c" "CMakeFiles/xp_capture.dir/src/capture/json_api.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/json_api.c.o.d"
  "/work/main/src/capture/record_events.c" "CMakeFiles/xp_capture.dir/src/capture/record_events.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/record_events.c.o.d"
  "/work/main/src/capture/spec.c" "CMakeFiles/xp_capture.dir/src/capture/spec.c.o" "gcc" "CMakeFiles/xp_capture.dir/src/capture/spec.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/lib/CMakeFiles/xtf_reader.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
