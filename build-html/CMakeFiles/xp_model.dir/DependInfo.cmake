
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/model/error_record.c" "CMakeFiles/xp_model.dir/src/model/error_record.c.o" "gcc" "CMakeFiles/xp_model.dir/src/model/error_record.c.o.d"
  "/work/main/src/model/event.c" "CMakeFiles/xp_model.dir/src/model/event.c.o" "gcc" "CMakeFiles/xp_model.dir/src/model/event.c.o.d"
  "/work/main/src/model/event_json.c" "CMakeFiles/xp_model.dir/src/model/event_json.c.o" "gcc" "CMakeFiles/xp_model.dir/src/model/event_json.c.o.d"
  "/work/main/src/model/strtab.c" "CMakeFiles/xp_model.dir/src/model/strtab.c.o" "gcc" "CMakeFiles/xp_model.dir/src/model/strtab.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build-html/CMakeFiles/xpc.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
