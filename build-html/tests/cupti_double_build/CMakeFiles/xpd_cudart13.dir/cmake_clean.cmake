file(REMOVE_RECURSE
  "../cupti_double/13/libcudart.pdb"
  "../cupti_double/13/libcudart.so.13"
  "CMakeFiles/xpd_cudart13.dir/cudart_double.c.o"
  "CMakeFiles/xpd_cudart13.dir/cudart_double.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpd_cudart13.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
