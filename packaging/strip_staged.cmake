# SPDX-License-Identifier: MIT
# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): runs on the staged files before the .deb files
# are made. CPack's own strip leaves librecd.a whole (debug data and, in LTO builds, a second copy
# of every function as GCC bytecode: 11 MB) and keeps .comment sections; this strips them as
# Debian's dh_strip does, so librecd.a links with any compiler and lintian finds nothing to say.

find_program(RECD_STRIP NAMES strip)
if(NOT RECD_STRIP)
  message(FATAL_ERROR "strip (binutils) is needed to package librecd.a")
endif()
file(GLOB_RECURSE archives "${CPACK_TEMPORARY_DIRECTORY}/*/librecd.a")
foreach(archive ${archives})
  execute_process(COMMAND "${RECD_STRIP}" --strip-debug --enable-deterministic-archives
      --remove-section=.comment --remove-section=.note
      --remove-section=.gnu.lto_* --remove-section=.gnu.debuglto_*
      --strip-symbol=__gnu_lto_slim --strip-symbol=__gnu_lto_v1 "${archive}"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "strip ${archive}: ${err}")
  endif()
endforeach()
# Executables and the shared library: CPack stripped their symbols; .comment (the compiler's
# version strings) goes too.
file(GLOB_RECURSE staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_DIRECTORY}/*")
list(FILTER staged INCLUDE REGEX "/(bin/[^/]+|librecd\\.so\\.[0-9.]+)$")
foreach(elf ${staged})
  if(NOT IS_SYMLINK "${elf}")
    execute_process(COMMAND "${RECD_STRIP}" --remove-section=.comment --remove-section=.note "${elf}"
      RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "strip ${elf}: ${err}")
    endif()
  endif()
endforeach()
