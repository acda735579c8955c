file(REMOVE_RECURSE
  "CMakeFiles/test_collect_libbpf.dir/unit/test_collect_libbpf.c.o"
  "CMakeFiles/test_collect_libbpf.dir/unit/test_collect_libbpf.c.o.d"
  "test_collect_libbpf"
  "test_collect_libbpf.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_collect_libbpf.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
