# muon_add_library(<part> SOURCES ... HEADERS ... [DEPENDS ...] [HEADER_DIR dir])
# Defines target muon_<part>, exported as muon::<part>, headers installed to
# include/muon/<HEADER_DIR> (default <part>). One function so every part is
# built the same way.
function(muon_add_library part)
  cmake_parse_arguments(ARG "" "HEADER_DIR" "SOURCES;HEADERS;DEPENDS" ${ARGN})
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
  install(FILES ${ARG_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/muon/${ARG_HEADER_DIR})
endfunction()
