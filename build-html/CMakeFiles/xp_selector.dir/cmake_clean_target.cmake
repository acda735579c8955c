file(REMOVE_RECURSE
  "libxp_selector.a"
)
