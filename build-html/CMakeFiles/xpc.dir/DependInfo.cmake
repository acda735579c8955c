
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/common/atomic_file.c" "CMakeFiles/xpc.dir/common/atomic_file.c.o" "gcc" "CMakeFiles/xpc.dir/common/atomic_file.c.o.d"
  "/work/main/common/buf.c" "CMakeFiles/xpc.dir/common/buf.c.o" "gcc" "CMakeFiles/xpc.dir/common/buf.c.o.d"
  "/work/main/common/cancel.c" "CMakeFiles/xpc.dir/common/cancel.c.o" "gcc" "CMakeFiles/xpc.dir/common/cancel.c.o.d"
  "/work/main/common/env_hooks.c" "CMakeFiles/xpc.dir/common/env_hooks.c.o" "gcc" "CMakeFiles/xpc.dir/common/env_hooks.c.o.d"
  "/work/main/common/error.c" "CMakeFiles/xpc.dir/common/error.c.o" "gcc" "CMakeFiles/xpc.dir/common/error.c.o.d"
  "/work/main/common/json.c" "CMakeFiles/xpc.dir/common/json.c.o" "gcc" "CMakeFiles/xpc.dir/common/json.c.o.d"
  "/work/main/common/parse.c" "CMakeFiles/xpc.dir/common/parse.c.o" "gcc" "CMakeFiles/xpc.dir/common/parse.c.o.d"
  "/work/main/common/readfile.c" "CMakeFiles/xpc.dir/common/readfile.c.o" "gcc" "CMakeFiles/xpc.dir/common/readfile.c.o.d"
  "/work/main/common/suggest.c" "CMakeFiles/xpc.dir/common/suggest.c.o" "gcc" "CMakeFiles/xpc.dir/common/suggest.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
