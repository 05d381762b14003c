# SPDX-License-Identifier: MIT
# Libraries loaded with dlopen on first use (lib/src/base/dl_table.h): the soname to open is read
# from the library the build found, never written by hand, and so is the Debian package holding
# it (the packages' Depends name it, since dpkg-shlibdeps no longer sees the library).

find_program(RECD_DPKG_QUERY dpkg-query)
if(CMAKE_OBJDUMP)
  set(RECD_OBJDUMP "${CMAKE_OBJDUMP}")
else()
  find_program(RECD_OBJDUMP objdump)
endif()

# recd_dlopen_library(PREFIX NAME CANDIDATES...): of the library paths CANDIDATES (a find_library
# result, or pkg-config's <MODULE>_LINK_LIBRARIES), takes lib<NAME>.so and sets, in the caller's
# scope, <PREFIX>_SONAME ("libstorm.so.9") and <PREFIX>_DEB_PACKAGE ("libstorm9", or "" when
# dpkg does not know it). Configuration fails when the soname cannot be read.
function(recd_dlopen_library prefix name)
  set(path "")
  foreach(candidate ${ARGN})
    if(candidate MATCHES "/lib${name}\\.so$")
      set(path "${candidate}")
      break()
    endif()
  endforeach()
  if(NOT path)
    message(FATAL_ERROR "lib${name}.so is not among the libraries found (${ARGN}); cannot tell "
      "which soname to dlopen")
  endif()
  get_filename_component(real "${path}" REALPATH)
  set(soname "")
  if(RECD_OBJDUMP)
    execute_process(COMMAND "${RECD_OBJDUMP}" -p "${real}" OUTPUT_VARIABLE dump
      RESULT_VARIABLE dump_rc ERROR_QUIET)
    if(dump_rc EQUAL 0 AND dump MATCHES "\n[ \t]*SONAME[ \t]+([^ \t\r\n]+)")
      set(soname "${CMAKE_MATCH_1}")
    endif()
  endif()
  if(NOT soname)
    message(FATAL_ERROR "cannot read the SONAME of ${real} (lib${name}) with objdump -p "
      "('${RECD_OBJDUMP}'; binutils): rectool and librecd dlopen it by that name")
  endif()
  # The package that holds the file the soname names (a link to the real file, or the file).
  get_filename_component(dir "${path}" DIRECTORY)
  set(package "")
  if(RECD_DPKG_QUERY)
    foreach(file "${dir}/${soname}" "${real}")
      execute_process(COMMAND "${RECD_DPKG_QUERY}" -S "${file}" OUTPUT_VARIABLE owner
        RESULT_VARIABLE owner_rc ERROR_QUIET)
      if(owner_rc EQUAL 0 AND owner MATCHES "^([^:, \n]+)")
        set(package "${CMAKE_MATCH_1}")
        break()
      endif()
    endforeach()
  endif()
  if(NOT package)
    message(STATUS "lib${name}: no Debian package owns ${dir}/${soname}; the .deb files will not "
      "depend on it")
  endif()
  message(STATUS "lib${name}: loaded on first use as ${soname} (${package})")
  set(${prefix}_SONAME "${soname}" PARENT_SCOPE)
  set(${prefix}_DEB_PACKAGE "${package}" PARENT_SCOPE)
endfunction()

# recd_dlopen_definitions(TARGET PREFIX...): the compile definitions RECD_<PREFIX>_SONAME and
# RECD_<PREFIX>_PACKAGE (as C strings) that a dl_library table of TARGET's sources uses.
function(recd_dlopen_definitions target)
  foreach(prefix ${ARGN})
    target_compile_definitions(${target} PRIVATE
      "RECD_${prefix}_SONAME=\"${${prefix}_SONAME}\""
      "RECD_${prefix}_PACKAGE=\"${${prefix}_DEB_PACKAGE}\"")
  endforeach()
endfunction()

# recd_headers_of(TARGET IMPORTED...): TARGET compiles against the headers of the pkg-config
# imported targets (include directories, compile options) without linking them.
function(recd_headers_of target)
  foreach(imported ${ARGN})
    target_include_directories(${target} SYSTEM PRIVATE
      $<TARGET_PROPERTY:${imported},INTERFACE_INCLUDE_DIRECTORIES>)
    target_compile_options(${target} PRIVATE
      $<TARGET_PROPERTY:${imported},INTERFACE_COMPILE_OPTIONS>)
  endforeach()
endfunction()
