file(REMOVE_RECURSE
  "CMakeFiles/test_resolve_probe_site.dir/unit/test_resolve_probe_site.c.o"
  "CMakeFiles/test_resolve_probe_site.dir/unit/test_resolve_probe_site.c.o.d"
  "test_resolve_probe_site"
  "test_resolve_probe_site.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_resolve_probe_site.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
