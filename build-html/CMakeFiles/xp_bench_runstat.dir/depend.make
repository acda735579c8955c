# Empty dependencies file for xp_bench_runstat.
# This may be replaced when dependencies are built.
