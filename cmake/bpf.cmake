# SPDX-License-Identifier: Apache-2.0
# bpf.cmake - eBPF programs: vmlinux.h from the running kernel's BTF, every
# bpf/*.bpf.c compiled with clang's BPF target, a bpftool skeleton per
# object, all in the build tree (${CMAKE_BINARY_DIR}/bpf).  The custom
# target xprobe_bpf_skeletons is what xp_live and xp_inventory depend on; the skeleton
# directory and bpf/ (the shared record layouts) are added to the include
# path of every target defined after this file is included.
#
# Pitfalls met here: <bpf/usdt.bpf.h> includes
# <linux/errno.h>, which needs the multiarch include directory under
# -target bpf.  vmlinux.h is generated at build time, never committed.
find_program(XP_CLANG NAMES clang clang-14 clang-15 clang-16 REQUIRED)
find_program(XP_BPFTOOL NAMES bpftool PATHS /usr/sbin /usr/local/sbin REQUIRED)

set(XP_BPF_OUT ${CMAKE_BINARY_DIR}/bpf)
set(XP_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "BTF the vmlinux.h header is generated from")
file(MAKE_DIRECTORY ${XP_BPF_OUT})

execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch
                OUTPUT_VARIABLE XP_MULTIARCH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT XP_MULTIARCH)
  set(XP_MULTIARCH x86_64-linux-gnu)
endif()

add_custom_command(
  OUTPUT ${XP_BPF_OUT}/vmlinux.h
  COMMAND ${XP_BPFTOOL} btf dump file ${XP_VMLINUX_BTF} format c > ${XP_BPF_OUT}/vmlinux.h.tmp
  COMMAND ${CMAKE_COMMAND} -E rename ${XP_BPF_OUT}/vmlinux.h.tmp ${XP_BPF_OUT}/vmlinux.h
  COMMENT "Generating vmlinux.h from ${XP_VMLINUX_BTF}"
  VERBATIM)

# BPF_NO_PRESERVE_ACCESS_INDEX: see bpf/xp_live.bpf.c ("CO-RE and BTF").
set(XP_BPF_CFLAGS -g -O2 -target bpf -D__TARGET_ARCH_x86 -DBPF_NO_PRESERVE_ACCESS_INDEX
    -Wall -Wno-unused-function -Wno-compare-distinct-pointer-types
    -I${XP_BPF_OUT} -I${CMAKE_SOURCE_DIR}/bpf -I/usr/include/${XP_MULTIARCH})

file(GLOB XP_BPF_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/*.bpf.c)
file(GLOB XP_BPF_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/*.h)
set(XP_BPF_SKELETONS)

# ${name}.bpf.o from ${src} (with the extra compiler flags after them) and
# its skeleton ${name}.skel.h, appended to XP_BPF_SKELETONS.
function(xp_bpf_object name src)
  set(obj ${XP_BPF_OUT}/${name}.bpf.o)
  set(skel ${XP_BPF_OUT}/${name}.skel.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${XP_CLANG} ${XP_BPF_CFLAGS} ${ARGN} -c ${src} -o ${obj}
    DEPENDS ${src} ${XP_BPF_HEADERS} ${XP_BPF_OUT}/vmlinux.h
    COMMENT "Compiling BPF object ${name}.bpf.o"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${XP_BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "Generating BPF skeleton ${name}.skel.h"
    VERBATIM)
  set(XP_BPF_SKELETONS ${XP_BPF_SKELETONS} ${skel} PARENT_SCOPE)
endfunction()

foreach(src ${XP_BPF_SOURCES})
  get_filename_component(base ${src} NAME)
  string(REGEX REPLACE "\\.bpf\\.c$" "" name ${base})
  xp_bpf_object(${name} ${src})
  if(name STREQUAL "latency_hist")
    # the lean object: no session kfuncs, no --explain task reads
    # (bpf/latency_hist.bpf.c, "CO-RE"); its bytes, opened with the
    # skeleton above where neither a session link nor --explain is used,
    # spare libbpf the kernel BTF parse
    xp_bpf_object(${name}_lean ${src} -DXP_LH_LEAN)
  endif()
endforeach()

add_custom_target(xprobe_bpf_skeletons DEPENDS ${XP_BPF_SKELETONS})
include_directories(${XP_BPF_OUT} ${CMAKE_SOURCE_DIR}/bpf)

# Benchmark helpers (bench/): the empty-program floor and a launcher that
# reports time-to-first-event, peak RSS and CPU time of a tool.
if(EXISTS ${CMAKE_SOURCE_DIR}/bench/xp_floor.c)
  add_executable(xp_bench_floor ${CMAKE_SOURCE_DIR}/bench/xp_floor.c)
  add_dependencies(xp_bench_floor xprobe_bpf_skeletons)
  target_link_libraries(xp_bench_floor PRIVATE PkgConfig::LIBBPF)
  set_target_properties(xp_bench_floor PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
if(EXISTS ${CMAKE_SOURCE_DIR}/bench/xp_runstat.c)
  add_executable(xp_bench_runstat ${CMAKE_SOURCE_DIR}/bench/xp_runstat.c)
  set_target_properties(xp_bench_runstat PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
