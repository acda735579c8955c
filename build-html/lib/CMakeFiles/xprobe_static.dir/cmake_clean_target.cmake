file(REMOVE_RECURSE
  "libxprobe_static.a"
)
