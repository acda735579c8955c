file(REMOVE_RECURSE
  "../cupti_double/13/libcupti.pdb"
  "../cupti_double/13/libcupti.so.13"
  "CMakeFiles/xpd_cupti13.dir/cupti_double.c.o"
  "CMakeFiles/xpd_cupti13.dir/cupti_double.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpd_cupti13.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
