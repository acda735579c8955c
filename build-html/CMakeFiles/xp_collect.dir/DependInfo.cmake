
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/collect/agent_aggregate.c" "CMakeFiles/xp_collect.dir/src/collect/agent_aggregate.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/agent_aggregate.c.o.d"
  "/work/main/src/collect/agent_client.c" "CMakeFiles/xp_collect.dir/src/collect/agent_client.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/agent_client.c.o.d"
  "/work/main/src/collect/agent_inject.c" "CMakeFiles/xp_collect.dir/src/collect/agent_inject.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/agent_inject.c.o.d"
  "/work/main/src/collect/agent_inject_stub.c" "CMakeFiles/xp_collect.dir/src/collect/agent_inject_stub.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/agent_inject_stub.c.o.d"
  "/work/main/src/collect/agent_source.c" "CMakeFiles/xp_collect.dir/src/collect/agent_source.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/agent_source.c.o.d"
  "/work/main/src/collect/cpu_sample.c" "CMakeFiles/xp_collect.dir/src/collect/cpu_sample.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/cpu_sample.c.o.d"
  "/work/main/src/collect/cpu_sample_profile.c" "CMakeFiles/xp_collect.dir/src/collect/cpu_sample_profile.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/cpu_sample_profile.c.o.d"
  "/work/main/src/collect/cpu_sample_stacks.c" "CMakeFiles/xp_collect.dir/src/collect/cpu_sample_stacks.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/cpu_sample_stacks.c.o.d"
  "/work/main/src/collect/cpu_sample_verdict.c" "CMakeFiles/xp_collect.dir/src/collect/cpu_sample_verdict.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/cpu_sample_verdict.c.o.d"
  "/work/main/src/collect/latency_histogram.c" "CMakeFiles/xp_collect.dir/src/collect/latency_histogram.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/latency_histogram.c.o.d"
  "/work/main/src/collect/latency_histogram_summary.c" "CMakeFiles/xp_collect.dir/src/collect/latency_histogram_summary.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/latency_histogram_summary.c.o.d"
  "/work/main/src/collect/libbpf_msg.c" "CMakeFiles/xp_collect.dir/src/collect/libbpf_msg.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/libbpf_msg.c.o.d"
  "/work/main/src/collect/live_bpf.c" "CMakeFiles/xp_collect.dir/src/collect/live_bpf.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/live_bpf.c.o.d"
  "/work/main/src/collect/live_ebpf.c" "CMakeFiles/xp_collect.dir/src/collect/live_ebpf.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/live_ebpf.c.o.d"
  "/work/main/src/collect/live_events.c" "CMakeFiles/xp_collect.dir/src/collect/live_events.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/live_events.c.o.d"
  "/work/main/src/collect/live_plan.c" "CMakeFiles/xp_collect.dir/src/collect/live_plan.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/live_plan.c.o.d"
  "/work/main/src/collect/live_rules.c" "CMakeFiles/xp_collect.dir/src/collect/live_rules.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/live_rules.c.o.d"
  "/work/main/src/collect/live_run.c" "CMakeFiles/xp_collect.dir/src/collect/live_run.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/live_run.c.o.d"
  "/work/main/src/collect/probe_cost.c" "CMakeFiles/xp_collect.dir/src/collect/probe_cost.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/probe_cost.c.o.d"
  "/work/main/src/collect/symbolize.c" "CMakeFiles/xp_collect.dir/src/collect/symbolize.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/symbolize.c.o.d"
  "/work/main/src/collect/syscall_aggregate.c" "CMakeFiles/xp_collect.dir/src/collect/syscall_aggregate.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/syscall_aggregate.c.o.d"
  "/work/main/src/collect/syscall_aggregate_summary.c" "CMakeFiles/xp_collect.dir/src/collect/syscall_aggregate_summary.c.o" "gcc" "CMakeFiles/xp_collect.dir/src/collect/syscall_aggregate_summary.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_resolve.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_process.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_capture.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_correlate.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/lib/CMakeFiles/xtf_reader.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_selector.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
