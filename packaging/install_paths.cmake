# SPDX-License-Identifier: MIT
# Runs at install time (cmake --install, make install, CPack): installs config/recd.yaml and the
# systemd units, with the unit's paths taken from the prefix actually installed to, so
# `cmake --install --prefix P` and the .deb both get an ExecStart that names their own recd.
# Set by packaging/CMakeLists.txt: RECD_SOURCE_DIR, RECD_BINARY_DIR, RECD_BINDIR_REL,
# RECD_SYSCONFDIR_REL, RECD_DOCDIR_REL, RECD_UNITDIR_REL (each relative to the prefix, or absolute).

# A relative directory lives under the prefix; an absolute one is used as it is. As in CMake's
# GNUInstallDirs, the /usr prefix keeps its configuration in /etc, not /usr/etc.
function(recd_install_dir out rel)
  if(IS_ABSOLUTE "${rel}")
    set(dir "${rel}")
  elseif(rel STREQUAL "etc" AND CMAKE_INSTALL_PREFIX MATCHES "^/usr/?$")
    set(dir "/etc")
  else()
    set(dir "${CMAKE_INSTALL_PREFIX}/${rel}")
  endif()
  string(REGEX REPLACE "//+" "/" dir "${dir}")
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

recd_install_dir(RECD_BINDIR "${RECD_BINDIR_REL}")
recd_install_dir(sysconfdir "${RECD_SYSCONFDIR_REL}")
set(RECD_CONFDIR "${sysconfdir}/recd")
recd_install_dir(RECD_DOCDIR "${RECD_DOCDIR_REL}")
recd_install_dir(unitdir "${RECD_UNITDIR_REL}")

# One staging folder per destination: ctest runs installs to different prefixes at the same time.
string(MD5 destination "$ENV{DESTDIR}|${CMAKE_INSTALL_PREFIX}")
set(staged "${RECD_BINARY_DIR}/install-staged/${destination}")
configure_file("${RECD_SOURCE_DIR}/systemd/recd.service.in" "${staged}/recd.service" @ONLY)
file(INSTALL DESTINATION "${unitdir}" TYPE FILE
  FILES "${staged}/recd.service" "${RECD_SOURCE_DIR}/systemd/recd.socket")
# An edited config is never overwritten: the new default goes beside it as recd.yaml.new.
# (A package's copy is a conffile instead, which dpkg handles the same way.)
set(installed_config "$ENV{DESTDIR}${RECD_CONFDIR}/recd.yaml")
set(shipped_config "${RECD_SOURCE_DIR}/config/recd.yaml")
set(config_name recd.yaml)
if(EXISTS "${installed_config}")
  file(SHA256 "${installed_config}" installed_sum)
  file(SHA256 "${shipped_config}" shipped_sum)
  if(NOT installed_sum STREQUAL shipped_sum)
    set(config_name recd.yaml.new)
    message(STATUS "Kept the edited ${RECD_CONFDIR}/recd.yaml; the shipped one is recd.yaml.new")
  endif()
endif()
file(INSTALL DESTINATION "${RECD_CONFDIR}" TYPE FILE FILES "${shipped_config}" RENAME "${config_name}")
