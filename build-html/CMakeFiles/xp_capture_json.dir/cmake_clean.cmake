file(REMOVE_RECURSE
  "CMakeFiles/xp_capture_json.dir/src/capture/decode_fast.c.o"
  "CMakeFiles/xp_capture_json.dir/src/capture/decode_fast.c.o.d"
  "CMakeFiles/xp_capture_json.dir/src/capture/decode_json.cc.o"
  "CMakeFiles/xp_capture_json.dir/src/capture/decode_json.cc.o.d"
  "libxp_capture_json.a"
  "libxp_capture_json.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C CXX)
  include(CMakeFiles/xp_capture_json.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
