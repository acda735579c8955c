file(REMOVE_RECURSE
  "libxp_model.a"
)
