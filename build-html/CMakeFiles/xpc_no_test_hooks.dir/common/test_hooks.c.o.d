CMakeFiles/xpc_no_test_hooks.dir/common/test_hooks.c.o: \
 /work/main/common/test_hooks.c /usr/include/stdc-predef.h \
 /work/main/common/env_hooks.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stdbool.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h
