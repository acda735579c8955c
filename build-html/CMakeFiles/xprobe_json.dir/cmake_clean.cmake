file(REMOVE_RECURSE
  "CMakeFiles/xprobe_json.dir/src/capture/json_plugin.c.o"
  "CMakeFiles/xprobe_json.dir/src/capture/json_plugin.c.o.d"
  "lib/xprobe/xprobe-json.pdb"
  "lib/xprobe/xprobe-json.so"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xprobe_json.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
