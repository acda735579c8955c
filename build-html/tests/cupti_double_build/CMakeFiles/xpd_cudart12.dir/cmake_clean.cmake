file(REMOVE_RECURSE
  "../cupti_double/12/libcudart.pdb"
  "../cupti_double/12/libcudart.so.12"
  "CMakeFiles/xpd_cudart12.dir/cudart_double.c.o"
  "CMakeFiles/xpd_cudart12.dir/cudart_double.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpd_cudart12.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
