file(REMOVE_RECURSE
  "CMakeFiles/cupti_double"
)

# Per-language clean rules from dependency scanning.
foreach(lang )
  include(CMakeFiles/cupti_double.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
