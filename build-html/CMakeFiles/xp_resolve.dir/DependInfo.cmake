
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/resolve/debug_file.c" "CMakeFiles/xp_resolve.dir/src/resolve/debug_file.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/debug_file.c.o.d"
  "/work/main/src/resolve/endpoint_list.c" "CMakeFiles/xp_resolve.dir/src/resolve/endpoint_list.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/endpoint_list.c.o.d"
  "/work/main/src/resolve/insn.c" "CMakeFiles/xp_resolve.dir/src/resolve/insn.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/insn.c.o.d"
  "/work/main/src/resolve/probe_site.c" "CMakeFiles/xp_resolve.dir/src/resolve/probe_site.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/probe_site.c.o.d"
  "/work/main/src/resolve/resolve.c" "CMakeFiles/xp_resolve.dir/src/resolve/resolve.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/resolve.c.o.d"
  "/work/main/src/resolve/target_files.c" "CMakeFiles/xp_resolve.dir/src/resolve/target_files.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/target_files.c.o.d"
  "/work/main/src/resolve/tracefs.c" "CMakeFiles/xp_resolve.dir/src/resolve/tracefs.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/tracefs.c.o.d"
  "/work/main/src/resolve/usdt.c" "CMakeFiles/xp_resolve.dir/src/resolve/usdt.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/usdt.c.o.d"
  "/work/main/src/resolve/xelf.c" "CMakeFiles/xp_resolve.dir/src/resolve/xelf.c.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/xelf.c.o.d"
  "/work/main/src/resolve/demangle.cc" "CMakeFiles/xp_resolve.dir/src/resolve/demangle.cc.o" "gcc" "CMakeFiles/xp_resolve.dir/src/resolve/demangle.cc.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xp_process.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_selector.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xp_model.dir/DependInfo.cmake"
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
