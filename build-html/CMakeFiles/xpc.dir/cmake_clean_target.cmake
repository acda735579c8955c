file(REMOVE_RECURSE
  "libxpc.a"
)
