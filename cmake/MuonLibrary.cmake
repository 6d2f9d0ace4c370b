# muon_add_library(<part> SOURCES ... HEADERS ... [DEPENDS ...])
# Defines target muon_<part>, exported as muon::<part>, headers installed to
# include/muon/<part>. One function so base and net are built the same way.
function(muon_add_library part)
  cmake_parse_arguments(ARG "" "" "SOURCES;HEADERS;DEPENDS" ${ARGN})
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
  install(FILES ${ARG_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/muon/${part})
endfunction()
