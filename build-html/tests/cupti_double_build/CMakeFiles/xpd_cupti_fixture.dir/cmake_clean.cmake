file(REMOVE_RECURSE
  "../cupti_double/cupti_fixture"
  "../cupti_double/cupti_fixture.pdb"
  "CMakeFiles/xpd_cupti_fixture.dir/cupti_fixture.c.o"
  "CMakeFiles/xpd_cupti_fixture.dir/cupti_fixture.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpd_cupti_fixture.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
