file(REMOVE_RECURSE
  "CMakeFiles/test_resolve_insn.dir/unit/test_resolve_insn.c.o"
  "CMakeFiles/test_resolve_insn.dir/unit/test_resolve_insn.c.o.d"
  "test_resolve_insn"
  "test_resolve_insn.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_resolve_insn.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
