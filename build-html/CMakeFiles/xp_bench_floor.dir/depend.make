# Empty dependencies file for xp_bench_floor.
# This may be replaced when dependencies are built.
