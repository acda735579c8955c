file(REMOVE_RECURSE
  "CMakeFiles/xp_model.dir/src/model/error_record.c.o"
  "CMakeFiles/xp_model.dir/src/model/error_record.c.o.d"
  "CMakeFiles/xp_model.dir/src/model/event.c.o"
  "CMakeFiles/xp_model.dir/src/model/event.c.o.d"
  "CMakeFiles/xp_model.dir/src/model/event_json.c.o"
  "CMakeFiles/xp_model.dir/src/model/event_json.c.o.d"
  "CMakeFiles/xp_model.dir/src/model/strtab.c.o"
  "CMakeFiles/xp_model.dir/src/model/strtab.c.o.d"
  "libxp_model.a"
  "libxp_model.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_model.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
