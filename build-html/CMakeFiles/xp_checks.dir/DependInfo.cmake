
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/checks/agent_path.c" "CMakeFiles/xp_checks.dir/src/checks/agent_path.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/agent_path.c.o.d"
  "/work/main/src/checks/bpfprobe.c" "CMakeFiles/xp_checks.dir/src/checks/bpfprobe.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/bpfprobe.c.o.d"
  "/work/main/src/checks/cuda_candidates.c" "CMakeFiles/xp_checks.dir/src/checks/cuda_candidates.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/cuda_candidates.c.o.d"
  "/work/main/src/checks/cudalibs.c" "CMakeFiles/xp_checks.dir/src/checks/cudalibs.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/cudalibs.c.o.d"
  "/work/main/src/checks/doctor_checks.c" "CMakeFiles/xp_checks.dir/src/checks/doctor_checks.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/doctor_checks.c.o.d"
  "/work/main/src/checks/ldcache.c" "CMakeFiles/xp_checks.dir/src/checks/ldcache.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/ldcache.c.o.d"
  "/work/main/src/checks/nvml.c" "CMakeFiles/xp_checks.dir/src/checks/nvml.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/nvml.c.o.d"
  "/work/main/src/checks/probe_warnings.c" "CMakeFiles/xp_checks.dir/src/checks/probe_warnings.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/probe_warnings.c.o.d"
  "/work/main/src/checks/validate_checks.c" "CMakeFiles/xp_checks.dir/src/checks/validate_checks.c.o" "gcc" "CMakeFiles/xp_checks.dir/src/checks/validate_checks.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_resolve.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_process.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_correlate.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_selector.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
