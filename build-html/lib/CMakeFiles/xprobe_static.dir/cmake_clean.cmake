file(REMOVE_RECURSE
  "libxprobe_static.a"
  "libxprobe_static.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xprobe_static.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
