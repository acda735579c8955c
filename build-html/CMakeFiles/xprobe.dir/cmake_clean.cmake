file(REMOVE_RECURSE
  "CMakeFiles/xprobe.dir/src/cli/main.c.o"
  "CMakeFiles/xprobe.dir/src/cli/main.c.o.d"
  "bin/xprobe"
  "bin/xprobe.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xprobe.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
