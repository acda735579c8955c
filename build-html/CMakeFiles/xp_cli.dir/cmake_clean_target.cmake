file(REMOVE_RECURSE
  "libxp_cli.a"
)
