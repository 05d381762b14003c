# SPDX-License-Identifier: MIT
# Hardening flags from dpkg-buildflags, as Debian builds its packages: stack protector, fortified
# libc calls, format-string checks, read-only relocations bound at start (relro, bindnow). Taken
# in optimised builds only (_FORTIFY_SOURCE needs -O; the sanitizer builds have their own checks).
# dpkg-buildflags' -g, -O and -ffile-prefix-map are left out: the build type chooses those.

find_program(RECD_DPKG_BUILDFLAGS_PROGRAM dpkg-buildflags)
set(recd_hardening_default OFF)
if(RECD_DPKG_BUILDFLAGS_PROGRAM AND NOT RECD_SANITIZE AND NOT RECD_FUZZ
   AND CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$")
  set(recd_hardening_default ON)
endif()
option(RECD_DPKG_BUILDFLAGS
  "Add dpkg-buildflags' hardening flags (hardening=+all) in optimised builds" ${recd_hardening_default})

# recd_dpkg_buildflag(OUT NAME): dpkg-buildflags --get NAME with every hardening feature on, as
# a list, without the flags the build type owns.
function(recd_dpkg_buildflag out name)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=hardening=+all
      ${RECD_DPKG_BUILDFLAGS_PROGRAM} --get ${name}
    OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-buildflags --get ${name} failed (${rc}); configure with "
      "-DRECD_DPKG_BUILDFLAGS=OFF to build without it")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  list(FILTER flags EXCLUDE REGEX "^(-g.*|-O.*|-ffile-prefix-map=.*|-fdebug-prefix-map=.*)$")
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

if(RECD_DPKG_BUILDFLAGS)
  if(NOT RECD_DPKG_BUILDFLAGS_PROGRAM)
    message(FATAL_ERROR "RECD_DPKG_BUILDFLAGS is ON but dpkg-buildflags (dpkg-dev) is missing")
  endif()
  recd_dpkg_buildflag(recd_cppflags CPPFLAGS)
  recd_dpkg_buildflag(recd_cflags CFLAGS)
  recd_dpkg_buildflag(recd_ldflags LDFLAGS)
  add_compile_options(${recd_cppflags} ${recd_cflags})
  add_link_options(${recd_ldflags})
  string(REPLACE ";" " " recd_shown "${recd_cppflags};${recd_cflags};${recd_ldflags}")
  message(STATUS "dpkg-buildflags hardening: ${recd_shown}")
endif()
