file(REMOVE_RECURSE
  "CMakeFiles/xpl_secure_target.dir/secure_target.c.o"
  "CMakeFiles/xpl_secure_target.dir/secure_target.c.o.d"
  "secure_target"
  "secure_target.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpl_secure_target.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
