file(REMOVE_RECURSE
  "CMakeFiles/xp_cli.dir/src/cli/args.c.o"
  "CMakeFiles/xp_cli.dir/src/cli/args.c.o.d"
  "CMakeFiles/xp_cli.dir/src/cli/histogram_args.c.o"
  "CMakeFiles/xp_cli.dir/src/cli/histogram_args.c.o.d"
  "CMakeFiles/xp_cli.dir/src/cli/output.c.o"
  "CMakeFiles/xp_cli.dir/src/cli/output.c.o.d"
  "libxp_cli.a"
  "libxp_cli.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_cli.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
