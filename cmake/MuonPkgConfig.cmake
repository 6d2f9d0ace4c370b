# muon_install_pkgconfig(<name> DESCRIPTION <text> [TARGET <target>]
#                        [REQUIRES <package>...] [CFLAGS <flag>...]
#                        [LIBS <flag>...] [DEPS <flag>...])
# Installs <libdir>/pkgconfig/<name>.pc, the twin of the CMake package for
# builds without CMake:  g++ app.cc $(pkg-config --cflags --libs <name>)
# LIBS are the target's own flags (-lmuon_net), DEPS the libraries it links
# to (-luring). A static library does not carry its dependencies, so when
# TARGET is static its DEPS go to Libs and the plain command above links;
# otherwise they go to Libs.private (read by pkg-config --static only).
# Flags may use ${libdir} and ${includedir}. The file's prefix is the one
# muon is installed to, set at install time so that
# `cmake --install build --prefix P` is honoured.
set(MUON_PKGCONFIG_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/muon.pc.in)

function(muon_install_pkgconfig name)
  cmake_parse_arguments(ARG "" "DESCRIPTION;TARGET" "REQUIRES;CFLAGS;LIBS;DEPS" ${ARGN})
  set(libs ${ARG_LIBS})
  set(private "")
  if(ARG_DEPS)
    get_target_property(type ${ARG_TARGET} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      list(APPEND libs ${ARG_DEPS})
    else()
      set(private ${ARG_DEPS})
    endif()
  endif()
  set(pc_name ${name})
  set(pc_description ${ARG_DESCRIPTION})
  list(JOIN ARG_REQUIRES ", " pc_requires)
  list(JOIN ARG_CFLAGS " " pc_cflags)
  list(JOIN libs " " pc_libs)
  list(JOIN private " " pc_libs_private)
  # GNUInstallDirs' folders are relative to the prefix unless set absolute.
  set(pcdir "\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  set(pc_libdir "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(pc_includedir "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(pcdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
    set(pc_libdir "${CMAKE_INSTALL_LIBDIR}")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(pc_includedir "${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  set(body ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc.in)
  set(pc ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc)
  configure_file(${MUON_PKGCONFIG_TEMPLATE} ${body} @ONLY)
  install(CODE "
    file(READ [[${body}]] muon_pc_body)
    file(WRITE [[${pc}]] \"prefix=\${CMAKE_INSTALL_PREFIX}\\n\${muon_pc_body}\")
    file(INSTALL [[${pc}]] DESTINATION \"${pcdir}\")")
endfunction()
