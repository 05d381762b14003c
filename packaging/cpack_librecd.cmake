# SPDX-License-Identifier: MIT
# Read by CPack before it builds the packages (through the generated cpack_project.cmake, which
# sets RECD_LIBRARY, RECD_LIB_CONTROL_DIR, RECD_SYMBOLS_REFERENCE, RECD_UPSTREAM_VERSION,
# RECD_LIB_PACKAGE, RECD_SOVERSION): what CPack would have made for the library package had it not also written ldconfig calls into maintainer
# scripts (debian_control.cmake): its Depends from dpkg-shlibdeps, and a symbols file from
# dpkg-gensymbols, checked against packaging/debian/${RECD_LIB_PACKAGE}.symbols.

foreach(tool dpkg-shlibdeps dpkg-gensymbols)
  string(REPLACE "-" "_" var "RECD_${tool}")
  find_program(${var} ${tool})
  if(NOT ${var})
    message(FATAL_ERROR "${tool} (dpkg-dev) is needed to package ${RECD_LIB_PACKAGE}")
  endif()
endforeach()

# Depends: the libraries librecd.so links (libc, zlib, libdeflate, jansson). dpkg-shlibdeps wants
# a debian/control to exist, as CPack gives it.
set(work "${RECD_LIB_CONTROL_DIR}/work")
file(REMOVE_RECURSE "${work}")
file(WRITE "${work}/debian/control" "")
execute_process(COMMAND "${RECD_dpkg_shlibdeps}" -O "-e${RECD_LIBRARY}"
  WORKING_DIRECTORY "${work}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "shlibs:Depends=([^\n]+)")
  message(FATAL_ERROR "dpkg-shlibdeps on ${RECD_LIBRARY} failed (${rc}): ${err}${out}")
endif()
set(CPACK_DEBIAN_LIB_PACKAGE_DEPENDS "${CMAKE_MATCH_1}")

# symbols: every exported symbol with the version it appeared in. -c1 fails when a symbol the
# reference lists for an earlier version is gone; new ones are added with this upstream version
# (no Debian revision).
execute_process(COMMAND "${RECD_dpkg_gensymbols}" -p${RECD_LIB_PACKAGE} "-v${RECD_UPSTREAM_VERSION}"
    "-e${RECD_LIBRARY}" "-I${RECD_SYMBOLS_REFERENCE}" "-O${RECD_LIB_CONTROL_DIR}/symbols" -c1
  WORKING_DIRECTORY "${work}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dpkg-gensymbols: librecd.so.${RECD_SOVERSION} lost symbols that "
    "packaging/debian/${RECD_LIB_PACKAGE}.symbols lists (an ABI break; see that file):\n${out}${err}")
endif()
string(REGEX MATCHALL "\n\\+ [^\n]+" added "${out}")
list(LENGTH added added)
if(added GREATER 0)
  message(STATUS "${RECD_LIB_PACKAGE}: ${added} symbol(s) new since packaging/debian/${RECD_LIB_PACKAGE}.symbols, "
    "shipped as of ${RECD_UPSTREAM_VERSION}")
endif()
list(APPEND CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA "${RECD_LIB_CONTROL_DIR}/symbols")
file(REMOVE_RECURSE "${work}")
