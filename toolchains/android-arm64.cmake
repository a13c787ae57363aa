# Cross toolchain: Android arm64-v8a, API 24 (preset android-arm64).
#
# Needs an Android NDK (r23 or newer suggested): set the ANDROID_NDK environment
# variable (ANDROID_NDK_ROOT or ANDROID_NDK_HOME are accepted too) or pass
# -DANDROID_NDK=<ndk dir>. This file then sets ANDROID_ABI=arm64-v8a and
# ANDROID_PLATFORM=android-24 and includes the NDK's own
# build/cmake/android.toolchain.cmake, which sets the compiler, sysroot and flags.
#
# What the preset builds, and why:
# - OCTET_WITH_XNNPACK=OFF: Debian's libXNNPACK is built against glibc and
#   cannot be linked into a bionic program; our own NEON kernels run instead.
# - OCTET_BUILD_TESTS=OFF: doctest discovery runs each test binary at build
#   time, and there is no emulator for Android binaries here. To test on a
#   device, build the rpi-aarch64 preset's tests statically, or push this
#   preset's binaries with adb.
# - FlatBuffers is header-only for the runtime; its (architecture-independent)
#   headers come from the Debian arm64 mini sysroot that
#   scripts/fetch-target-debs.sh unpacks into .deps/arm64.
#
# No NDK can be installed on the CI machines (no Debian package, Google's
# servers unreachable), so CI does not configure this preset: it compile-checks
# the kernels for the Android triples with plain clang instead
# (scripts/android-compile-check.sh; kernel files include only compiler headers).
if(NOT ANDROID_NDK)
  foreach(_octet_var ANDROID_NDK ANDROID_NDK_ROOT ANDROID_NDK_HOME)
    if(NOT ANDROID_NDK AND DEFINED ENV{${_octet_var}} AND NOT "$ENV{${_octet_var}}" STREQUAL "")
      set(ANDROID_NDK "$ENV{${_octet_var}}")
    endif()
  endforeach()
endif()
if(NOT ANDROID_NDK OR NOT EXISTS "${ANDROID_NDK}/build/cmake/android.toolchain.cmake")
  if(ANDROID_NDK)
    set(_octet_why "ANDROID_NDK=${ANDROID_NDK} has no build/cmake/android.toolchain.cmake")
  else()
    set(_octet_why "ANDROID_NDK is not set")
  endif()
  message(FATAL_ERROR
    "android-arm64 needs the Android NDK: ${_octet_why}.\n"
    "Install an NDK (r23 or newer) and set ANDROID_NDK=<ndk dir> in the environment, or pass "
    "-DANDROID_NDK=<ndk dir>.\n"
    "Without an NDK, scripts/android-compile-check.sh compile-checks the kernels for the "
    "Android triples with plain clang (that is what CI does).")
endif()
get_filename_component(ANDROID_NDK "${ANDROID_NDK}" ABSOLUTE)
set(ENV{ANDROID_NDK} "${ANDROID_NDK}")   # try_compile re-reads this file

set(ANDROID_ABI arm64-v8a)
set(ANDROID_PLATFORM android-24)
include("${ANDROID_NDK}/build/cmake/android.toolchain.cmake")

# Header-only dependencies (FlatBuffers) from the Debian arm64 mini sysroot.
set(_octet_headers_root "${CMAKE_CURRENT_LIST_DIR}/../.deps/arm64")
get_filename_component(_octet_headers_root "${_octet_headers_root}" ABSOLUTE)
if(NOT IS_DIRECTORY "${_octet_headers_root}/usr/include/flatbuffers")
  message(FATAL_ERROR
    "android-arm64 takes the FlatBuffers headers from ${_octet_headers_root}, which is missing.\n"
    "Run   scripts/fetch-target-debs.sh arm64 .deps/arm64   (or scripts/setup.sh) first.")
endif()
list(APPEND CMAKE_FIND_ROOT_PATH "${_octet_headers_root}")
