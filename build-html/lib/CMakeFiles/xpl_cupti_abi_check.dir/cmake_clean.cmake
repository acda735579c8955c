file(REMOVE_RECURSE
  "CMakeFiles/xpl_cupti_abi_check.dir/device/cupti_abi_check.c.o"
  "CMakeFiles/xpl_cupti_abi_check.dir/device/cupti_abi_check.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpl_cupti_abi_check.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
