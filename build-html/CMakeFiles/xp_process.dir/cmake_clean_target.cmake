file(REMOVE_RECURSE
  "libxp_process.a"
)
