file(REMOVE_RECURSE
  "CMakeFiles/test_process_identity.dir/unit/test_process_identity.c.o"
  "CMakeFiles/test_process_identity.dir/unit/test_process_identity.c.o.d"
  "test_process_identity"
  "test_process_identity.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_process_identity.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
