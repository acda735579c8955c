file(REMOVE_RECURSE
  "libxtf_reader.a"
)
