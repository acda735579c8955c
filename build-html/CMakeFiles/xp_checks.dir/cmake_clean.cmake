file(REMOVE_RECURSE
  "CMakeFiles/xp_checks.dir/src/checks/agent_path.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/agent_path.c.o.d"
  "CMakeFiles/xp_checks.dir/src/checks/bpfprobe.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/bpfprobe.c.o.d"
  "CMakeFiles/xp_checks.dir/src/checks/cuda_candidates.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/cuda_candidates.c.o.d"
  "CMakeFiles/xp_checks.dir/src/checks/cudalibs.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/cudalibs.c.o.d"
  "CMakeFiles/xp_checks.dir/src/checks/doctor_checks.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/doctor_checks.c.o.d"
  "CMakeFiles/xp_checks.dir/src/checks/ldcache.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/ldcache.c.o.d"
  "CMakeFiles/xp_checks.dir/src/checks/nvml.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/nvml.c.o.d"
  "CMakeFiles/xp_checks.dir/src/checks/probe_warnings.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/probe_warnings.c.o.d"
  "CMakeFiles/xp_checks.dir/src/checks/validate_checks.c.o"
  "CMakeFiles/xp_checks.dir/src/checks/validate_checks.c.o.d"
  "libxp_checks.a"
  "libxp_checks.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xp_checks.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
