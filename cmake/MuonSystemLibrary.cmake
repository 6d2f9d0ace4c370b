# muon_system_library(<name> LIBRARY <lib> [HEADER <header>])
# Finds a C library that ships no CMake package (liburing, libzstd) and, when
# it is there, defines the imported target muon::<name> for it and sets
# <name>_FOUND in the caller's scope. muon's build calls it (with HEADER, for
# the sources that include it) and so does the installed package
# (muonConfig.cmake, without HEADER: no installed header includes these), so
# a static muon::net names liburing by this target, found on the user's
# machine, rather than by a path on the machine that built muon.
function(muon_system_library name)
  cmake_parse_arguments(ARG "" "LIBRARY;HEADER" "" ${ARGN})
  set(${name}_FOUND FALSE PARENT_SCOPE)
  if(TARGET muon::${name})
    set(${name}_FOUND TRUE PARENT_SCOPE)
    return()
  endif()
  string(TOUPPER ${name} var)
  find_library(MUON_${var}_LIBRARY ${ARG_LIBRARY})
  if(NOT MUON_${var}_LIBRARY)
    return()
  endif()
  if(ARG_HEADER)
    find_path(MUON_${var}_INCLUDE ${ARG_HEADER})
    if(NOT MUON_${var}_INCLUDE)
      return()
    endif()
  endif()
  add_library(muon::${name} UNKNOWN IMPORTED)
  set_target_properties(muon::${name} PROPERTIES IMPORTED_LOCATION ${MUON_${var}_LIBRARY})
  if(ARG_HEADER)
    set_target_properties(muon::${name} PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES ${MUON_${var}_INCLUDE})
  endif()
  set(${name}_FOUND TRUE PARENT_SCOPE)
endfunction()
