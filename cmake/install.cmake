# SPDX-License-Identifier: Apache-2.0
# install.cmake - what `make install` and `cmake --install BUILD [--prefix P]`
# put under $DESTDIR<prefix> (docs/development.md, "Installing"):
#
#   bin/xprobe                                   the CLI
#   lib/xprobe/xprobe-json.so                    its JSON decoder plugin
#   lib/libxprobe.so.0.1.0                       the runtime and Agent, with
#   lib/libxprobe.so.0, lib/libxprobe.so         its soname and linker links
#   lib/pkgconfig/libxprobe.pc                   for programs linking it
#   include/xprobe/*.h                           its public API
#   share/xprobe/schemas/*.schema.json           every document's schema
#   share/xprobe/skills/xprobe/                  the agent Skill
#   share/man/man1/xprobe.1                      the man page
#   share/bash-completion/completions/xprobe     bash completion
#
# Why lib/ and never GNUInstallDirs' multiarch libdir (lib/x86_64-linux-gnu
# under /usr on Debian): the CLI finds both of its libraries relative to
# its own executable, <exe dir>/../lib/xprobe/xprobe-json.so
# (src/capture/json_api.c) and <exe dir>/../lib/libxprobe.so.0, the Agent it
# injects (src/checks/agent_path.c).  Installing them anywhere else would
# leave the installed xprobe without its decoder and its Agent; the two
# rules are checked against the installed tree by tests/cli/test_install.py.
#
# Invariant: every path below is relative to the prefix, so `cmake
# --install --prefix` and DESTDIR both relocate the whole tree; the one
# file that names the prefix, libxprobe.pc, is written at install time
# from the prefix the install runs with, not the one configured.
set(XP_INSTALL_LIBDIR lib)
# Directories 0755 whatever the umask: the plugin loader and the Agent
# injection refuse a library in a directory others may write.
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
    GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

install(TARGETS xprobe RUNTIME DESTINATION bin)
install(TARGETS xprobe_json LIBRARY DESTINATION ${XP_INSTALL_LIBDIR}/xprobe)
if(TARGET libxprobe)
  install(TARGETS libxprobe LIBRARY DESTINATION ${XP_INSTALL_LIBDIR})
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/xprobe DESTINATION include
          FILES_MATCHING PATTERN "*.h")
  # libxprobe.pc for the prefix of this install (not the configured one):
  # `cmake --install build --prefix /opt/x` must write prefix=/opt/x.
  set(XP_PC_IN ${CMAKE_SOURCE_DIR}/dist/libxprobe.pc.in)
  set(XP_PC_OUT ${CMAKE_BINARY_DIR}/dist/libxprobe.pc)
  install(CODE "
    set(XP_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    set(XP_PC_LIBDIR \"${XP_INSTALL_LIBDIR}\")
    set(XP_PC_VERSION \"${PROJECT_VERSION}\")
    configure_file(\"${XP_PC_IN}\" \"${XP_PC_OUT}\" @ONLY)")
  install(FILES ${XP_PC_OUT} DESTINATION ${XP_INSTALL_LIBDIR}/pkgconfig)
endif()

install(DIRECTORY ${CMAKE_SOURCE_DIR}/schemas/ DESTINATION share/xprobe/schemas
        FILES_MATCHING PATTERN "*.schema.json")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/skills/xprobe/ DESTINATION share/xprobe/skills/xprobe)
install(FILES ${CMAKE_SOURCE_DIR}/dist/xprobe.1 DESTINATION share/man/man1)
install(FILES ${CMAKE_SOURCE_DIR}/dist/xprobe.bash-completion
        DESTINATION share/bash-completion/completions RENAME xprobe)
