
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/lib/agent/aggregate.c" "lib/CMakeFiles/xpl_objects.dir/agent/aggregate.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/agent/aggregate.c.o.d"
  "/work/main/lib/agent/capfile.c" "lib/CMakeFiles/xpl_objects.dir/agent/capfile.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/agent/capfile.c.o.d"
  "/work/main/lib/agent/capture.c" "lib/CMakeFiles/xpl_objects.dir/agent/capture.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/agent/capture.c.o.d"
  "/work/main/lib/agent/request.c" "lib/CMakeFiles/xpl_objects.dir/agent/request.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/agent/request.c.o.d"
  "/work/main/lib/agent/server.c" "lib/CMakeFiles/xpl_objects.dir/agent/server.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/agent/server.c.o.d"
  "/work/main/lib/device/cupti.c" "lib/CMakeFiles/xpl_objects.dir/device/cupti.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/device/cupti.c.o.d"
  "/work/main/lib/device/cupti_walk.c" "lib/CMakeFiles/xpl_objects.dir/device/cupti_walk.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/device/cupti_walk.c.o.d"
  "/work/main/lib/device/sim.c" "lib/CMakeFiles/xpl_objects.dir/device/sim.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/device/sim.c.o.d"
  "/work/main/lib/inspect/config.c" "lib/CMakeFiles/xpl_objects.dir/inspect/config.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/inspect/config.c.o.d"
  "/work/main/lib/inspect/crash_handlers.c" "lib/CMakeFiles/xpl_objects.dir/inspect/crash_handlers.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/inspect/crash_handlers.c.o.d"
  "/work/main/lib/inspect/env.c" "lib/CMakeFiles/xpl_objects.dir/inspect/env.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/inspect/env.c.o.d"
  "/work/main/lib/inspect/exec_registry.c" "lib/CMakeFiles/xpl_objects.dir/inspect/exec_registry.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/inspect/exec_registry.c.o.d"
  "/work/main/lib/inspect/outdir.c" "lib/CMakeFiles/xpl_objects.dir/inspect/outdir.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/inspect/outdir.c.o.d"
  "/work/main/lib/inspect/profile_api.c" "lib/CMakeFiles/xpl_objects.dir/inspect/profile_api.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/inspect/profile_api.c.o.d"
  "/work/main/lib/inspect/session_lifecycle.c" "lib/CMakeFiles/xpl_objects.dir/inspect/session_lifecycle.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/inspect/session_lifecycle.c.o.d"
  "/work/main/lib/nvtx/inject.c" "lib/CMakeFiles/xpl_objects.dir/nvtx/inject.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/nvtx/inject.c.o.d"
  "/work/main/lib/producers/clock.c" "lib/CMakeFiles/xpl_objects.dir/producers/clock.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/producers/clock.c.o.d"
  "/work/main/lib/producers/monitor.c" "lib/CMakeFiles/xpl_objects.dir/producers/monitor.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/producers/monitor.c.o.d"
  "/work/main/lib/producers/sys_trace.c" "lib/CMakeFiles/xpl_objects.dir/producers/sys_trace.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/producers/sys_trace.c.o.d"
  "/work/main/lib/profile/engine.c" "lib/CMakeFiles/xpl_objects.dir/profile/engine.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/profile/engine.c.o.d"
  "/work/main/lib/xtf/xtf_write.c" "lib/CMakeFiles/xpl_objects.dir/xtf/xtf_write.c.o" "gcc" "lib/CMakeFiles/xpl_objects.dir/xtf/xtf_write.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
