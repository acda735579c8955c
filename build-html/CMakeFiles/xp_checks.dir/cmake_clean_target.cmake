file(REMOVE_RECURSE
  "libxp_checks.a"
)
