file(REMOVE_RECURSE
  "../cupti_double/12/libcupti.pdb"
  "../cupti_double/12/libcupti.so.12"
  "CMakeFiles/xpd_cupti12.dir/cupti_double.c.o"
  "CMakeFiles/xpd_cupti12.dir/cupti_double.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpd_cupti12.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
