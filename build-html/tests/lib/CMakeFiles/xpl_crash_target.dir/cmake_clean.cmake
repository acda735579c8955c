file(REMOVE_RECURSE
  "CMakeFiles/xpl_crash_target.dir/crash_target.c.o"
  "CMakeFiles/xpl_crash_target.dir/crash_target.c.o.d"
  "crash_target"
  "crash_target.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpl_crash_target.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
