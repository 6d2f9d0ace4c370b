# muon_add_library(<part> SOURCES ... HEADERS ... [INTERNAL_HEADERS ...]
#                  [DEPENDS ...] [HEADER_DIR dir])
# Defines target muon_<part>, exported as muon::<part>. SOURCES and HEADERS
# are paths below the part's folder, which has a subfolder per concern
# (base/log/Logging.h); users include every header by its name alone,
# "muon/<HEADER_DIR>/Logging.h" (HEADER_DIR defaults to <part>), in the
# build tree (muon_link_headers) and installed alike. INTERNAL_HEADERS are
# muon's own ("muon/<HEADER_DIR>/internal/RecordQueue.h"): installed because
# the public headers' inline code needs some of them, but not an interface.
# One function so every part is built the same way.
function(muon_add_library part)
  cmake_parse_arguments(ARG "" "HEADER_DIR" "SOURCES;HEADERS;INTERNAL_HEADERS;DEPENDS" ${ARGN})
  if(NOT ARG_HEADER_DIR)
    set(ARG_HEADER_DIR ${part})
  endif()
  add_library(muon_${part} ${ARG_SOURCES})
  set_target_properties(muon_${part} PROPERTIES EXPORT_NAME ${part})
  add_library(muon::${part} ALIAS muon_${part})
  target_include_directories(muon_${part} PUBLIC
    $<BUILD_INTERFACE:${MUON_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(muon_${part} PUBLIC ${ARG_DEPENDS} PRIVATE $<BUILD_INTERFACE:muon_warnings>)
  install(TARGETS muon_${part} EXPORT muonTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  muon_link_headers(${ARG_HEADER_DIR} ${ARG_HEADERS})
  install(FILES ${ARG_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/muon/${ARG_HEADER_DIR})
  if(ARG_INTERNAL_HEADERS)
    muon_link_headers(${ARG_HEADER_DIR}/internal ${ARG_INTERNAL_HEADERS})
    install(FILES ${ARG_INTERNAL_HEADERS}
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/muon/${ARG_HEADER_DIR}/internal)
  endif()
endfunction()

# muon_link_headers(<dir> HEADER...): makes each header (a path below the
# current source folder) reachable as <build>/include/muon/<dir>/<its name>,
# through a symbolic link, so that the sources' folders are free to change
# while every #include "muon/base/X.h" stays as it is. Two headers of one
# <dir> may not share a name.
function(muon_link_headers dir)
  set(linkDir ${MUON_INCLUDE_DIR}/muon/${dir})
  # Build trees made before the folders had a link to the whole source folder here.
  if(IS_SYMLINK ${linkDir})
    file(REMOVE ${linkDir})
  endif()
  file(MAKE_DIRECTORY ${linkDir})
  foreach(header ${ARGN})
    get_filename_component(name ${header} NAME)
    set(target ${CMAKE_CURRENT_SOURCE_DIR}/${header})
    set(link ${linkDir}/${name})
    if(IS_SYMLINK ${link})
      file(READ_SYMLINK ${link} old)
      if(old STREQUAL target)
        continue()
      endif()
      file(REMOVE ${link})
    endif()
    file(CREATE_LINK ${target} ${link} SYMBOLIC)
  endforeach()
endfunction()
