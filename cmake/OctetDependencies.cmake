# Every dependency comes from Debian's packages (for cross builds: from the
# project-local sysroot that scripts/fetch-target-debs.sh unpacks into .deps/).

# FlatBuffers: headers for the runtime, flatc (always the build machine's) to
# generate the C++ from the schema at build time.
find_program(FLATC_EXECUTABLE flatc NO_CMAKE_FIND_ROOT_PATH)
if(NOT FLATC_EXECUTABLE)
  message(FATAL_ERROR "flatc not found: install flatbuffers-compiler (scripts/setup.sh does)")
endif()
find_path(FLATBUFFERS_INCLUDE_DIR flatbuffers/flatbuffers.h)
if(NOT FLATBUFFERS_INCLUDE_DIR)
  message(FATAL_ERROR "flatbuffers/flatbuffers.h not found: install libflatbuffers-dev "
                      "(cross builds: run scripts/fetch-target-debs.sh)")
endif()

# XNNPACK + pthreadpool + cpuinfo: Debian ships no CMake config or .pc for
# XNNPACK, and libXNNPACK.so needs the other two, so all three are linked.
find_path(XNNPACK_INCLUDE_DIR xnnpack.h)
find_library(XNNPACK_LIBRARY NAMES XNNPACK)
find_library(PTHREADPOOL_LIBRARY NAMES pthreadpool)
find_library(CPUINFO_LIBRARY NAMES cpuinfo)
if(XNNPACK_INCLUDE_DIR AND XNNPACK_LIBRARY AND PTHREADPOOL_LIBRARY AND CPUINFO_LIBRARY)
  set(OCTET_XNNPACK_FOUND ON)
else()
  set(OCTET_XNNPACK_FOUND OFF)
endif()
option(OCTET_WITH_XNNPACK "Use Debian's XNNPACK (+ pthreadpool, cpuinfo) where it is faster"
       ${OCTET_XNNPACK_FOUND})
find_package(Threads REQUIRED)
if(OCTET_WITH_XNNPACK)
  if(NOT OCTET_XNNPACK_FOUND)
    message(FATAL_ERROR "OCTET_WITH_XNNPACK=ON but XNNPACK, pthreadpool or cpuinfo is missing: "
                        "install libxnnpack-dev libpthreadpool-dev libcpuinfo-dev")
  endif()
  add_library(octet_xnnpack INTERFACE)
  target_include_directories(octet_xnnpack SYSTEM INTERFACE ${XNNPACK_INCLUDE_DIR})
  target_link_libraries(octet_xnnpack INTERFACE ${XNNPACK_LIBRARY} ${PTHREADPOOL_LIBRARY}
                                                ${CPUINFO_LIBRARY} Threads::Threads m)
  target_compile_definitions(octet_xnnpack INTERFACE OCTET_WITH_XNNPACK=1)
  message(STATUS "octet: XNNPACK ${XNNPACK_LIBRARY}")
else()
  message(STATUS "octet: building without XNNPACK")
endif()

if(OCTET_BUILD_TESTS)
  find_package(doctest CONFIG)
  if(NOT doctest_FOUND)
    message(FATAL_ERROR "doctest not found: install doctest-dev "
                        "(cross builds: run scripts/fetch-target-debs.sh)")
  endif()
  include(doctest)
endif()

# nlohmann-json (header-only): the converter's JSON parser (config.json,
# safetensors headers), host tooling only. Cross builds look in their target
# sysroot (scripts/fetch-target-debs.sh fills it); without it the Hugging
# Face importer and its tests are left out (OCTET_HAVE_IMPORTER).
# Eigen (header-only): the converter's linear algebra (the Cholesky
# factorizations of compensated rounding, quantize/rounding.h); never the runtime's.
find_package(nlohmann_json 3.2 CONFIG QUIET)
find_package(Eigen3 3.3 CONFIG QUIET)
if(nlohmann_json_FOUND AND Eigen3_FOUND)
  set(OCTET_HAVE_IMPORTER ON)
  message(STATUS "octet: Hugging Face importer with nlohmann_json ${nlohmann_json_VERSION}, "
                 "Eigen ${Eigen3_VERSION}")
else()
  set(OCTET_HAVE_IMPORTER OFF)
  message(STATUS "octet: nlohmann_json (nlohmann-json3-dev) or Eigen (libeigen3-dev) not found: "
                 "octet-convert is built without the Hugging Face importer")
endif()
