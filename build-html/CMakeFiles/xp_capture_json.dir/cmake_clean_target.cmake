file(REMOVE_RECURSE
  "libxp_capture_json.a"
)
