file(REMOVE_RECURSE
  "CMakeFiles/test_collect_sysagg.dir/unit/test_collect_sysagg.c.o"
  "CMakeFiles/test_collect_sysagg.dir/unit/test_collect_sysagg.c.o.d"
  "test_collect_sysagg"
  "test_collect_sysagg.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_collect_sysagg.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
