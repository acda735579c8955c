file(REMOVE_RECURSE
  "../cupti_double/11/libcudart.pdb"
  "../cupti_double/11/libcudart.so.11"
  "CMakeFiles/xpd_cudart11.dir/cudart_double.c.o"
  "CMakeFiles/xpd_cudart11.dir/cudart_double.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpd_cudart11.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
