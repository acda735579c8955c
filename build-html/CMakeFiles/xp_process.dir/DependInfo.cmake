
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/process/children.c" "CMakeFiles/xp_process.dir/src/process/children.c.o" "gcc" "CMakeFiles/xp_process.dir/src/process/children.c.o.d"
  "/work/main/src/process/identity.c" "CMakeFiles/xp_process.dir/src/process/identity.c.o" "gcc" "CMakeFiles/xp_process.dir/src/process/identity.c.o.d"
  "/work/main/src/process/namespaces.c" "CMakeFiles/xp_process.dir/src/process/namespaces.c.o" "gcc" "CMakeFiles/xp_process.dir/src/process/namespaces.c.o.d"
  "/work/main/src/process/perf_map_file.c" "CMakeFiles/xp_process.dir/src/process/perf_map_file.c.o" "gcc" "CMakeFiles/xp_process.dir/src/process/perf_map_file.c.o.d"
  "/work/main/src/process/procfs.c" "CMakeFiles/xp_process.dir/src/process/procfs.c.o" "gcc" "CMakeFiles/xp_process.dir/src/process/procfs.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
