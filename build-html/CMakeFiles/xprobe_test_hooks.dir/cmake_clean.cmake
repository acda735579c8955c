file(REMOVE_RECURSE
  "CMakeFiles/xprobe_test_hooks.dir/src/cli/main.c.o"
  "CMakeFiles/xprobe_test_hooks.dir/src/cli/main.c.o.d"
  "test-bin/xprobe"
  "test-bin/xprobe.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xprobe_test_hooks.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
