file(REMOVE_RECURSE
  "libxp_cmd.a"
)
