CMakeFiles/xp_selector.dir/gen/syscall_table.gen.c.o: \
 /work/main/build-html/gen/syscall_table.gen.c /usr/include/stdc-predef.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h \
 /work/main/src/selector/syscall_table_gen.h
