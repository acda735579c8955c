file(REMOVE_RECURSE
  "CMakeFiles/test_checks_parse.dir/unit/test_checks_parse.c.o"
  "CMakeFiles/test_checks_parse.dir/unit/test_checks_parse.c.o.d"
  "test_checks_parse"
  "test_checks_parse.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_checks_parse.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
