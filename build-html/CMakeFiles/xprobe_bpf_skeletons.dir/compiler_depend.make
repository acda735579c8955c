# Empty custom commands generated dependencies file for xprobe_bpf_skeletons.
# This may be replaced when dependencies are built.
