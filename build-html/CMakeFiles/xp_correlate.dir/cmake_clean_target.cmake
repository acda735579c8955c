file(REMOVE_RECURSE
  "libxp_correlate.a"
)
