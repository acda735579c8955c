file(REMOVE_RECURSE
  "CMakeFiles/test_collect_cpu.dir/unit/test_collect_cpu.c.o"
  "CMakeFiles/test_collect_cpu.dir/unit/test_collect_cpu.c.o.d"
  "test_collect_cpu"
  "test_collect_cpu.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_collect_cpu.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
