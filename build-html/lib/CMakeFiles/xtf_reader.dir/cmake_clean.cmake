file(REMOVE_RECURSE
  "../gen/xprobe/xtf.pb-c.c"
  "../gen/xprobe/xtf.pb-c.h"
  "CMakeFiles/xtf_reader.dir/__/gen/xprobe/xtf.pb-c.c.o"
  "CMakeFiles/xtf_reader.dir/__/gen/xprobe/xtf.pb-c.c.o.d"
  "CMakeFiles/xtf_reader.dir/core/log.c.o"
  "CMakeFiles/xtf_reader.dir/core/log.c.o.d"
  "CMakeFiles/xtf_reader.dir/core/util.c.o"
  "CMakeFiles/xtf_reader.dir/core/util.c.o.d"
  "CMakeFiles/xtf_reader.dir/xtf/crc32c.c.o"
  "CMakeFiles/xtf_reader.dir/xtf/crc32c.c.o.d"
  "CMakeFiles/xtf_reader.dir/xtf/rings_recover.c.o"
  "CMakeFiles/xtf_reader.dir/xtf/rings_recover.c.o.d"
  "CMakeFiles/xtf_reader.dir/xtf/session_read.c.o"
  "CMakeFiles/xtf_reader.dir/xtf/session_read.c.o.d"
  "CMakeFiles/xtf_reader.dir/xtf/xtf_read.c.o"
  "CMakeFiles/xtf_reader.dir/xtf/xtf_read.c.o.d"
  "libxtf_reader.a"
  "libxtf_reader.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/xtf_reader.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
