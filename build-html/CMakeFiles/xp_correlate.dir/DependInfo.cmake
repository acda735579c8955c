
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/correlate/correlate.c" "CMakeFiles/xp_correlate.dir/src/correlate/correlate.c.o" "gcc" "CMakeFiles/xp_correlate.dir/src/correlate/correlate.c.o.d"
  "/work/main/src/correlate/keymap.c" "CMakeFiles/xp_correlate.dir/src/correlate/keymap.c.o" "gcc" "CMakeFiles/xp_correlate.dir/src/correlate/keymap.c.o.d"
  "/work/main/src/correlate/latency_view.c" "CMakeFiles/xp_correlate.dir/src/correlate/latency_view.c.o" "gcc" "CMakeFiles/xp_correlate.dir/src/correlate/latency_view.c.o.d"
  "/work/main/src/correlate/pairing.c" "CMakeFiles/xp_correlate.dir/src/correlate/pairing.c.o" "gcc" "CMakeFiles/xp_correlate.dir/src/correlate/pairing.c.o.d"
  "/work/main/src/correlate/policy.c" "CMakeFiles/xp_correlate.dir/src/correlate/policy.c.o" "gcc" "CMakeFiles/xp_correlate.dir/src/correlate/policy.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_selector.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
