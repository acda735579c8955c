
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/build-html/gen/syscall_table.gen.c" "CMakeFiles/xp_selector.dir/gen/syscall_table.gen.c.o" "gcc" "CMakeFiles/xp_selector.dir/gen/syscall_table.gen.c.o.d"
  "/work/main/src/selector/match.c" "CMakeFiles/xp_selector.dir/src/selector/match.c.o" "gcc" "CMakeFiles/xp_selector.dir/src/selector/match.c.o.d"
  "/work/main/src/selector/name_filter.c" "CMakeFiles/xp_selector.dir/src/selector/name_filter.c.o" "gcc" "CMakeFiles/xp_selector.dir/src/selector/name_filter.c.o.d"
  "/work/main/src/selector/selector.c" "CMakeFiles/xp_selector.dir/src/selector/selector.c.o" "gcc" "CMakeFiles/xp_selector.dir/src/selector/selector.c.o.d"
  "/work/main/src/selector/syscall_table.c" "CMakeFiles/xp_selector.dir/src/selector/syscall_table.c.o" "gcc" "CMakeFiles/xp_selector.dir/src/selector/syscall_table.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
