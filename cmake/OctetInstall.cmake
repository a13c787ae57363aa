# Install rules and Debian packages (docs/design.md §5b), included by the top-level
# CMakeLists.txt after every target is defined.
#
#   cmake --install build/<preset> --prefix P   gives
#     P/include/octet/octet.h, octet.hpp
#     P/lib/liboctet.so -> liboctet.so.0 -> liboctet.so.0.1.0   (exports octet_* only)
#     P/lib/liboctet.a                 every runtime layer in one archive
#     P/lib/cmake/octet/               find_package(octet): octet::octet, octet::octet_static
#     P/lib/pkgconfig/octet.pc         the shared library (Libs.private: the archive's needs)
#     P/lib/pkgconfig/octet-static.pc  the archive and what it needs
#     P/bin/octet, P/bin/octet-convert (targets/cli; component "tools")
#   (lib/ is GNUInstallDirs' CMAKE_INSTALL_LIBDIR: lib/<multiarch> when configured
#   with CMAKE_INSTALL_PREFIX=/usr on Debian.)
#
#   cpack --config build/<preset>/CPackConfig.cmake   gives three .debs for the
#   build's architecture (amd64, arm64, armhf), installed under /usr with the
#   libraries in Debian's multiarch directory /usr/lib/<triple>:
#     liboctet0      liboctet.so.0*                                  (components deb_runtime)
#     liboctet-dev   headers, liboctet.so, liboctet.a, CMake package, .pc files (deb_dev)
#     octet-tools    octet, octet-convert                             (tools)
#   Their Depends come from the NEEDED entries of the packaged files
#   (cmake/OctetDebDepends.cmake runs at cpack time: dpkg-shlibdeps cannot see the
#   cross architectures' libraries, which are unpacked in .deps/, not installed).
#
# The deb_* components install the same files as the plain ones, under the
# multiarch directory; they are EXCLUDE_FROM_ALL, so `cmake --install` without
# --component installs only the plain tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# --- liboctet.a: every layer under `octet` in one archive ------------------------
# The runtime is one static library per layer (runtime/CMakeLists.txt); a consumer
# of the installed liboctet.a must get all of them. The layers are found by walking
# the link graph of `octet` (so a new layer or source file is picked up), and their
# object files make one more static library, octet_static.

# Walks the link interface of ITEM: our own static/object libraries go to
# _octet_layers, everything else (system libraries, imported targets) to
# _octet_externals, in first-seen order.
function(_octet_collect_layers item)
  if(item MATCHES "^\\$<LINK_ONLY:(.+)>$")
    set(item "${CMAKE_MATCH_1}")
  elseif(item MATCHES "^\\$<")
    message(FATAL_ERROR "OctetInstall: cannot follow the link item '${item}' of the runtime")
  endif()
  if(TARGET "${item}")
    get_target_property(_aliased "${item}" ALIASED_TARGET)
    if(_aliased)
      set(item "${_aliased}")
    endif()
    get_target_property(_imported "${item}" IMPORTED)
    get_target_property(_type "${item}" TYPE)
    if(_imported)
      set(_kind external)
    elseif(_type STREQUAL "STATIC_LIBRARY" OR _type STREQUAL "OBJECT_LIBRARY")
      set(_kind layer)
    elseif(_type STREQUAL "INTERFACE_LIBRARY")
      set(_kind interface)
    else()
      message(FATAL_ERROR "OctetInstall: the runtime links ${item} (${_type}); "
                          "liboctet.a can only hold static layers")
    endif()
  else()
    set(_kind external)
  endif()

  if(_kind STREQUAL "external")
    if(NOT item IN_LIST _octet_externals)
      set(_octet_externals ${_octet_externals} "${item}" PARENT_SCOPE)
    endif()
    return()
  endif()
  if(item IN_LIST _octet_seen)
    return()
  endif()
  list(APPEND _octet_seen "${item}")
  if(_kind STREQUAL "layer")
    list(APPEND _octet_layers "${item}")
  endif()
  get_target_property(_deps "${item}" INTERFACE_LINK_LIBRARIES)
  if(_deps)
    foreach(_dep IN LISTS _deps)
      _octet_collect_layers("${_dep}")
    endforeach()
  endif()
  set(_octet_seen ${_octet_seen} PARENT_SCOPE)
  set(_octet_layers ${_octet_layers} PARENT_SCOPE)
  set(_octet_externals ${_octet_externals} PARENT_SCOPE)
endfunction()

set(_octet_seen "")
set(_octet_layers "")
set(_octet_externals "")
_octet_collect_layers(octet)

# The external libraries by name, not by this machine's path (relocatable, and
# right for cross builds, whose libraries live in .deps/): /x/libXNNPACK.so -> XNNPACK.
set(OCTET_STATIC_LINK_LIBRARIES "")   # for the CMake package
foreach(_ext IN LISTS _octet_externals)
  if(_ext STREQUAL "Threads::Threads")
    # The CMake package finds it again (find_dependency(Threads)).
  elseif(TARGET "${_ext}")
    message(FATAL_ERROR "OctetInstall: the runtime links the imported target ${_ext}: "
                        "say in cmake/OctetInstall.cmake how a consumer finds it")
  elseif(_ext MATCHES "^/.*/lib([^/]+)\\.(so|a)$")
    set(_ext "${CMAKE_MATCH_1}")
  elseif(_ext MATCHES "^-l(.+)$")
    set(_ext "${CMAKE_MATCH_1}")
  elseif(NOT _ext MATCHES "^[A-Za-z0-9_+.-]+$")
    message(FATAL_ERROR "OctetInstall: cannot name the runtime's link item '${_ext}' "
                        "relocatably")
  endif()
  list(APPEND OCTET_STATIC_LINK_LIBRARIES "${_ext}")
endforeach()
# The runtime is C++ (a C consumer links with cc), and libm after it.
list(APPEND OCTET_STATIC_LINK_LIBRARIES stdc++ m)
list(REMOVE_DUPLICATES OCTET_STATIC_LINK_LIBRARIES)
set(OCTET_PC_LIBS_PRIVATE "")         # for pkg-config
foreach(_lib IN LISTS OCTET_STATIC_LINK_LIBRARIES)
  if(_lib STREQUAL "Threads::Threads")
    string(APPEND OCTET_PC_LIBS_PRIVATE " -lpthread")
  else()
    string(APPEND OCTET_PC_LIBS_PRIVATE " -l${_lib}")
  endif()
endforeach()
string(STRIP "${OCTET_PC_LIBS_PRIVATE}" OCTET_PC_LIBS_PRIVATE)
list(JOIN _octet_layers " " _layers_msg)
message(STATUS "octet: liboctet.a holds ${_layers_msg}; links ${OCTET_PC_LIBS_PRIVATE}")

set(_octet_objects "")
foreach(_layer IN LISTS _octet_layers)
  list(APPEND _octet_objects "$<TARGET_OBJECTS:${_layer}>")
endforeach()
add_library(octet_static STATIC ${_octet_objects})
# Its own directory: build/<preset>/lib/liboctet.a is the API-only `octet`.
set_target_properties(octet_static PROPERTIES
  OUTPUT_NAME octet
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/static
  LINKER_LANGUAGE CXX
  EXPORT_NAME octet_static)
target_include_directories(octet_static INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>)
target_link_libraries(octet_static INTERFACE ${OCTET_STATIC_LINK_LIBRARIES})

# --- the shared library's exported name ---------------------------------------------
set_target_properties(octet_shared PROPERTIES EXPORT_NAME octet)

# --- install trees ---------------------------------------------------------------------
# octet_install_tree(NAME LIBDIR <dir> RUNTIME <component> DEV <component>
#                    PC_PREFIX <prefix line of the .pc files> [EXCLUDE_FROM_ALL])
function(octet_install_tree name)
  cmake_parse_arguments(PARSE_ARGV 1 A "EXCLUDE_FROM_ALL" "LIBDIR;RUNTIME;DEV;PC_PREFIX" "")
  set(_excl "")
  if(A_EXCLUDE_FROM_ALL)
    set(_excl EXCLUDE_FROM_ALL)
  endif()
  set(_gen ${CMAKE_BINARY_DIR}/package/${name})
  set(_cmakedir ${A_LIBDIR}/cmake/octet)

  install(TARGETS octet_shared octet_static EXPORT octet_${name}_targets
          LIBRARY DESTINATION ${A_LIBDIR} COMPONENT ${A_RUNTIME} NAMELINK_COMPONENT ${A_DEV}
                  ${_excl}
          ARCHIVE DESTINATION ${A_LIBDIR} COMPONENT ${A_DEV} ${_excl}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/octet/octet.h
                ${PROJECT_SOURCE_DIR}/runtime/include/octet/octet.hpp
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/octet COMPONENT ${A_DEV} ${_excl})

  install(EXPORT octet_${name}_targets NAMESPACE octet:: FILE octetTargets.cmake
          DESTINATION ${_cmakedir} COMPONENT ${A_DEV} ${_excl})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/octetConfig.cmake.in
                                ${_gen}/octetConfig.cmake INSTALL_DESTINATION ${_cmakedir})
  write_basic_package_version_file(${_gen}/octetConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${_gen}/octetConfig.cmake ${_gen}/octetConfigVersion.cmake
          DESTINATION ${_cmakedir} COMPONENT ${A_DEV} ${_excl})

  set(OCTET_PC_PREFIX "${A_PC_PREFIX}")
  set(OCTET_PC_LIBDIR "${A_LIBDIR}")
  set(OCTET_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/octet.pc.in ${_gen}/octet.pc @ONLY)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/octet-static.pc.in ${_gen}/octet-static.pc @ONLY)
  install(FILES ${_gen}/octet.pc ${_gen}/octet-static.pc
          DESTINATION ${A_LIBDIR}/pkgconfig COMPONENT ${A_DEV} ${_excl})
endfunction()

# The .pc files find the prefix from their own place (relocatable): lib/pkgconfig
# is two levels under it, lib/<triple>/pkgconfig three.
function(_octet_pc_prefix libdir out)
  set(_up "\${pcfiledir}/..")
  string(REPLACE "/" ";" _parts "${libdir}")
  foreach(_p IN LISTS _parts)
    string(APPEND _up "/..")
  endforeach()
  set(${out} "${_up}" PARENT_SCOPE)
endfunction()

# `cmake --install`: the plain tree.
_octet_pc_prefix(${CMAKE_INSTALL_LIBDIR} _plain_pc_prefix)
octet_install_tree(plain LIBDIR ${CMAKE_INSTALL_LIBDIR} RUNTIME runtime DEV development
                   PC_PREFIX "${_plain_pc_prefix}")

# The .debs: /usr, the multiarch library directory.
set(OCTET_DEB_PREFIX /usr)
if(CMAKE_LIBRARY_ARCHITECTURE)
  set(OCTET_DEB_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE})
else()
  set(OCTET_DEB_LIBDIR lib)
endif()
octet_install_tree(deb LIBDIR ${OCTET_DEB_LIBDIR} RUNTIME deb_runtime DEV deb_dev
                   PC_PREFIX ${OCTET_DEB_PREFIX} EXCLUDE_FROM_ALL)

# --- CPack: .debs -------------------------------------------------------------------
# Debian's name for the target architecture.
if(CMAKE_LIBRARY_ARCHITECTURE MATCHES "^x86_64-linux-gnu$")
  set(OCTET_DEB_ARCH amd64)
elseif(CMAKE_LIBRARY_ARCHITECTURE MATCHES "^aarch64-linux-gnu$")
  set(OCTET_DEB_ARCH arm64)
elseif(CMAKE_LIBRARY_ARCHITECTURE MATCHES "^arm-linux-gnueabihf$")
  set(OCTET_DEB_ARCH armhf)
else()
  set(OCTET_DEB_ARCH "")
endif()

if(OCTET_DEB_ARCH AND NOT ANDROID)
  set(OCTET_DEB_VERSION "${PROJECT_VERSION}-1")
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME octet)
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
  set(CPACK_PACKAGE_CONTACT "octet developers <octet@example.org>")
  set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
  set(CPACK_PACKAGING_INSTALL_PREFIX ${OCTET_DEB_PREFIX})
  set(CPACK_STRIP_FILES ON)
  set(CPACK_DEB_COMPONENT_INSTALL ON)
  set(CPACK_COMPONENTS_ALL deb_runtime deb_dev tools)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${OCTET_DEB_ARCH})
  set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # <name>_<version>-1_<arch>.deb
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)   # cmake/OctetDebDepends.cmake instead
  set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

  set(CPACK_DEBIAN_DEB_RUNTIME_PACKAGE_NAME liboctet${PROJECT_VERSION_MAJOR})
  set(CPACK_DEBIAN_DEB_RUNTIME_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_DEB_RUNTIME_DESCRIPTION "int8 Transformer inference runtime: shared library
liboctet.so.${PROJECT_VERSION_MAJOR}, the C API of octet (octet/octet.h).")
  set(CPACK_DEBIAN_DEB_DEV_PACKAGE_NAME liboctet-dev)
  set(CPACK_DEBIAN_DEB_DEV_PACKAGE_SECTION libdevel)
  set(CPACK_DEBIAN_DEB_DEV_DESCRIPTION "int8 Transformer inference runtime: development files
Headers (octet/octet.h, octet/octet.hpp), liboctet.so, the self-contained static
liboctet.a, the CMake package (find_package(octet): octet::octet,
octet::octet_static) and pkg-config files (octet, octet-static).")
  set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME octet-tools)
  set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
  set(CPACK_DEBIAN_TOOLS_DESCRIPTION "int8 Transformer inference runtime: command-line tools
octet (run, generate, chat, tokenize, bench, inspect) and octet-convert.")

  # The -dev package: its shared library, and what a static link of liboctet.a
  # needs (the -dev packages of its external libraries).
  set(_dev_depends "liboctet${PROJECT_VERSION_MAJOR} (= ${OCTET_DEB_VERSION})")
  if(OCTET_WITH_XNNPACK)
    string(APPEND _dev_depends ", libxnnpack-dev, libpthreadpool-dev, libcpuinfo-dev")
  endif()
  string(APPEND _dev_depends ", libstdc++-12-dev | libstdc++-dev")
  set(OCTET_DEB_DEV_EXTRA_DEPENDS "${_dev_depends}")

  # Depends of every package from its files' NEEDED entries (cpack time).
  set(OCTET_DEB_COMPONENT_PACKAGES
      "deb_runtime=liboctet${PROJECT_VERSION_MAJOR};deb_dev=liboctet-dev;tools=octet-tools")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/OctetDebDepends.cmake.in
                 ${CMAKE_BINARY_DIR}/package/OctetDebDepends.cmake @ONLY)
  set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_BINARY_DIR}/package/OctetDebDepends.cmake)
  include(CPack)
endif()
