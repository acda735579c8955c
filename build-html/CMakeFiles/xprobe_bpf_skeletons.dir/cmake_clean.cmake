file(REMOVE_RECURSE
  "CMakeFiles/xprobe_bpf_skeletons"
  "bpf/latency_hist.bpf.o"
  "bpf/latency_hist.skel.h"
  "bpf/syscall_agg.bpf.o"
  "bpf/syscall_agg.skel.h"
  "bpf/vmlinux.h"
  "bpf/xp_floor.bpf.o"
  "bpf/xp_floor.skel.h"
  "bpf/xp_live.bpf.o"
  "bpf/xp_live.skel.h"
)

# Per-language clean rules from dependency scanning.
foreach(lang )
  include(CMakeFiles/xprobe_bpf_skeletons.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
