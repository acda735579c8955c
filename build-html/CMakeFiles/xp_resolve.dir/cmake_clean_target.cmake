file(REMOVE_RECURSE
  "libxp_resolve.a"
)
