CMakeFiles/xp_report.dir/gen/html_assets.gen.c.o: \
 /work/main/build-html/gen/html_assets.gen.c /usr/include/stdc-predef.h \
 /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h
