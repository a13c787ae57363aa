# Cross toolchain: Raspberry Pi OS 64-bit / Debian 12 arm64 (preset rpi-aarch64).
#
# Compiler: Debian's g++-aarch64-linux-gnu. Baseline ISA: armv8-a (the compiler's
# default; Pi 3, 4, 5 and Zero 2). The dotprod (armv8.2) and i8mm (armv8.6)
# kernel files get their own -march flags in runtime/kernels and are chosen at
# run time, so nothing here raises the baseline.
#
# Target libraries: the mini sysroot that scripts/fetch-target-debs.sh unpacks
# (default <repo>/.deps/arm64; override with -DTARGET_DEPS_ROOT=... or the
# TARGET_DEPS_ROOT environment variable). libc and libstdc++ come from the
# cross compiler's own /usr/aarch64-linux-gnu.
#
# Tests run under qemu-user through CMAKE_CROSSCOMPILING_EMULATOR with
# `-cpu max` (dotprod and i8mm present), so ctest covers every kernel.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER   aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

if(NOT TARGET_DEPS_ROOT)
  if(DEFINED ENV{TARGET_DEPS_ROOT})
    set(TARGET_DEPS_ROOT "$ENV{TARGET_DEPS_ROOT}")
  else()
    set(TARGET_DEPS_ROOT "${CMAKE_CURRENT_LIST_DIR}/../.deps/arm64")
  endif()
endif()
get_filename_component(TARGET_DEPS_ROOT "${TARGET_DEPS_ROOT}" ABSOLUTE)
if(NOT IS_DIRECTORY "${TARGET_DEPS_ROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR
    "The arm64 target libraries are missing: ${TARGET_DEPS_ROOT} does not exist or is incomplete.\n"
    "Run   scripts/fetch-target-debs.sh arm64 .deps/arm64   (or scripts/setup.sh, which also "
    "installs the cross compiler and qemu-user), then configure again.")
endif()
set(ENV{TARGET_DEPS_ROOT} "${TARGET_DEPS_ROOT}")   # try_compile re-reads this file

set(CMAKE_FIND_ROOT_PATH "${TARGET_DEPS_ROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # flatc is the build machine's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# libXNNPACK.so needs libcpuinfo and libpthreadpool: let ld find them.
set(_octet_tlib "${TARGET_DEPS_ROOT}/usr/lib/aarch64-linux-gnu")
set(CMAKE_EXE_LINKER_FLAGS_INIT    "-Wl,-rpath-link,${_octet_tlib}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_octet_tlib}")

# binfmt_misc may be absent: call qemu explicitly.
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-aarch64;-cpu;max;-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=${_octet_tlib})
