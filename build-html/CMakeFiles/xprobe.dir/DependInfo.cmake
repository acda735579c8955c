
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/cli/main.c" "CMakeFiles/xprobe.dir/src/cli/main.c.o" "gcc" "CMakeFiles/xprobe.dir/src/cli/main.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_cli.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_cmd.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_report.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_collect.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_capture.dir/DependInfo.cmake"
  "/work/main/build-html/lib/CMakeFiles/xtf_reader.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_checks.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_resolve.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_process.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_correlate.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_selector.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
