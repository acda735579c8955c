file(REMOVE_RECURSE
  "../cupti_double/12/libcuda.pdb"
  "../cupti_double/12/libcuda.so.1"
  "CMakeFiles/xpd_cuda12.dir/cuda_double.c.o"
  "CMakeFiles/xpd_cuda12.dir/cuda_double.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpd_cuda12.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
