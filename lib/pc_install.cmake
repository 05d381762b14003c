# SPDX-License-Identifier: MIT
# Runs at install time (cmake --install, make install, CPack): writes recd.pc with the prefix
# actually installed to, so `pkg-config --cflags recd` prints -I/usr/include (or -I<prefix>/include
# after `cmake --install --prefix <prefix>`), never a path through pkgconfig/../../...
# Set by lib/CMakeLists.txt: RECD_PC_TEMPLATE (recd.pc with only @RECD_PC_PREFIX@ left),
# RECD_PC_STAGING (a folder of the build tree), RECD_PC_DESTINATION (libdir/pkgconfig, relative to
# the prefix or absolute).

set(RECD_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "//+" "/" RECD_PC_PREFIX "${RECD_PC_PREFIX}")
string(REGEX REPLACE "(.)/$" "\\1" RECD_PC_PREFIX "${RECD_PC_PREFIX}")
# One staging file per destination: ctest runs installs to different prefixes at the same time.
string(MD5 destination "$ENV{DESTDIR}|${CMAKE_INSTALL_PREFIX}")
set(staged "${RECD_PC_STAGING}/${destination}/recd.pc")
configure_file("${RECD_PC_TEMPLATE}" "${staged}" @ONLY)
if(IS_ABSOLUTE "${RECD_PC_DESTINATION}")
  set(dir "${RECD_PC_DESTINATION}")
else()
  set(dir "${CMAKE_INSTALL_PREFIX}/${RECD_PC_DESTINATION}")
endif()
file(INSTALL DESTINATION "${dir}" TYPE FILE FILES "${staged}")
