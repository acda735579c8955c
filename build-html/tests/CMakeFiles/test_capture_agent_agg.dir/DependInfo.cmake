
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/tests/unit/test_capture_agent_agg.c" "tests/CMakeFiles/test_capture_agent_agg.dir/unit/test_capture_agent_agg.c.o" "gcc" "tests/CMakeFiles/test_capture_agent_agg.dir/unit/test_capture_agent_agg.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_capture.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/lib/CMakeFiles/xtf_reader.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
