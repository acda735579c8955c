file(REMOVE_RECURSE
  "CMakeFiles/xpc.dir/common/atomic_file.c.o"
  "CMakeFiles/xpc.dir/common/atomic_file.c.o.d"
  "CMakeFiles/xpc.dir/common/buf.c.o"
  "CMakeFiles/xpc.dir/common/buf.c.o.d"
  "CMakeFiles/xpc.dir/common/cancel.c.o"
  "CMakeFiles/xpc.dir/common/cancel.c.o.d"
  "CMakeFiles/xpc.dir/common/env_hooks.c.o"
  "CMakeFiles/xpc.dir/common/env_hooks.c.o.d"
  "CMakeFiles/xpc.dir/common/error.c.o"
  "CMakeFiles/xpc.dir/common/error.c.o.d"
  "CMakeFiles/xpc.dir/common/json.c.o"
  "CMakeFiles/xpc.dir/common/json.c.o.d"
  "CMakeFiles/xpc.dir/common/parse.c.o"
  "CMakeFiles/xpc.dir/common/parse.c.o.d"
  "CMakeFiles/xpc.dir/common/readfile.c.o"
  "CMakeFiles/xpc.dir/common/readfile.c.o.d"
  "CMakeFiles/xpc.dir/common/suggest.c.o"
  "CMakeFiles/xpc.dir/common/suggest.c.o.d"
  "libxpc.a"
  "libxpc.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xpc.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
