file(REMOVE_RECURSE
  "../cupti_double/13/libcuda.pdb"
  "../cupti_double/13/libcuda.so.1"
  "CMakeFiles/xpd_cuda13.dir/cuda_double.c.o"
  "CMakeFiles/xpd_cuda13.dir/cuda_double.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpd_cuda13.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
