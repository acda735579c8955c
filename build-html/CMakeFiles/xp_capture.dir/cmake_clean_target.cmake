file(REMOVE_RECURSE
  "libxp_capture.a"
)
