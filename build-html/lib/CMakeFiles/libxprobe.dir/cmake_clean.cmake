file(REMOVE_RECURSE
  "libxprobe.pdb"
  "libxprobe.so"
  "libxprobe.so.0"
  "libxprobe.so.0.1.0"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/libxprobe.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
