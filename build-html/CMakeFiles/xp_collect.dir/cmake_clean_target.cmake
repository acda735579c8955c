file(REMOVE_RECURSE
  "libxp_collect.a"
)
