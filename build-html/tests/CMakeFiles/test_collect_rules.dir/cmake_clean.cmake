file(REMOVE_RECURSE
  "CMakeFiles/test_collect_rules.dir/unit/test_collect_rules.c.o"
  "CMakeFiles/test_collect_rules.dir/unit/test_collect_rules.c.o.d"
  "test_collect_rules"
  "test_collect_rules.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_collect_rules.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
