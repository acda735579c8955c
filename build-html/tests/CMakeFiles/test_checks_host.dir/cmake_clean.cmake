file(REMOVE_RECURSE
  "CMakeFiles/test_checks_host.dir/unit/test_checks_host.c.o"
  "CMakeFiles/test_checks_host.dir/unit/test_checks_host.c.o.d"
  "test_checks_host"
  "test_checks_host.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_checks_host.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
