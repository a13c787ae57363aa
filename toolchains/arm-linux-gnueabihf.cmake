# Cross toolchain: Raspberry Pi OS 32-bit / Debian 12 armhf (preset rpi-armhf).
#
# Compiler: Debian's g++-arm-linux-gnueabihf. Baseline ISA: ARMv7-A with NEON
# (VFPv4), hard-float: Pi 2 (Cortex-A7) and newer (docs/design.md §6). Debian's
# armhf userland is ARMv7, so Pi 1 / Zero (ARMv6) cannot be targeted anyway.
# The dotprod and i8mm kernel files get their own -march=armv8.x flags in
# runtime/kernels (a later -march on the command line wins) and are chosen at
# run time, so nothing here raises the baseline.
#
# Target libraries: the mini sysroot that scripts/fetch-target-debs.sh unpacks
# (default <repo>/.deps/armhf; override with -DTARGET_DEPS_ROOT=... or the
# TARGET_DEPS_ROOT environment variable). libc and libstdc++ come from the
# cross compiler's own /usr/arm-linux-gnueabihf.
#
# Tests run under qemu-user through CMAKE_CROSSCOMPILING_EMULATOR with
# `-cpu max`. Note: qemu 7.2's arm32 `max` does not report dotprod/i8mm in
# AT_HWCAP, so tests must force those paths to cover them.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(CMAKE_C_COMPILER   arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)

set(CMAKE_C_FLAGS_INIT   "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
# -Wno-psabi: GCC's "parameter passing ... changed in GCC 7.1" notes.
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -Wno-psabi")

if(NOT TARGET_DEPS_ROOT)
  if(DEFINED ENV{TARGET_DEPS_ROOT})
    set(TARGET_DEPS_ROOT "$ENV{TARGET_DEPS_ROOT}")
  else()
    set(TARGET_DEPS_ROOT "${CMAKE_CURRENT_LIST_DIR}/../.deps/armhf")
  endif()
endif()
get_filename_component(TARGET_DEPS_ROOT "${TARGET_DEPS_ROOT}" ABSOLUTE)
if(NOT IS_DIRECTORY "${TARGET_DEPS_ROOT}/usr/lib/arm-linux-gnueabihf")
  message(FATAL_ERROR
    "The armhf target libraries are missing: ${TARGET_DEPS_ROOT} does not exist or is incomplete.\n"
    "Run   scripts/fetch-target-debs.sh armhf .deps/armhf   (or scripts/setup.sh, which also "
    "installs the cross compiler and qemu-user), then configure again.")
endif()
set(ENV{TARGET_DEPS_ROOT} "${TARGET_DEPS_ROOT}")   # try_compile re-reads this file

set(CMAKE_FIND_ROOT_PATH "${TARGET_DEPS_ROOT}" /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # flatc is the build machine's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# libXNNPACK.so needs libcpuinfo and libpthreadpool: let ld find them.
set(_octet_tlib "${TARGET_DEPS_ROOT}/usr/lib/arm-linux-gnueabihf")
set(CMAKE_EXE_LINKER_FLAGS_INIT    "-Wl,-rpath-link,${_octet_tlib}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_octet_tlib}")

# binfmt_misc may be absent: call qemu explicitly.
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-arm;-cpu;max;-L;/usr/arm-linux-gnueabihf;-E;LD_LIBRARY_PATH=${_octet_tlib})
