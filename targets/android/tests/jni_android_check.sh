#!/usr/bin/env bash
# java.jni_android_compile: the JNI glue (jni/octet_jni.cc) compiles for the Android library's
# two ABIs without an NDK: clang for aarch64-linux-android24 and armv7a-linux-androideabi24
# (softfp), against the Debian cross toolchains' glibc and libstdc++ headers and the JDK's
# jni.h (the JNI types are the same on Android), with the project's warnings, -Werror, and
# -Wshorten-64-to-32 (32-bit size_t and pointers against 64-bit jlong on armeabi-v7a).
# As scripts/android-compile-check.sh says of runtime/text: this catches what the triple
# changes, not a declaration bionic or libc++ lacks (an NDK build does that).
#
# usage: jni_android_check.sh SOURCE_ROOT JNI_INCLUDE_DIR [CLANGXX]
set -euo pipefail
root=$1 jni=$2 cxx=${3:-clang++-14}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# armeabi-v7a is softfp; Debian's armhf glibc lists only the hard-float stubs.
mkdir -p "$out/shim/gnu"
: >"$out/shim/gnu/stubs-soft.h"
for spec in "aarch64-linux-android24 aarch64-linux-gnu -march=armv8-a" \
            "armv7a-linux-androideabi24 arm-linux-gnueabihf -march=armv7-a -mfpu=neon -mfloat-abi=softfp"; do
  read -r -a words <<<"$spec"
  triple=${words[0]} gnu=${words[1]} isa=("${words[@]:2}")
  inc=/usr/$gnu/include
  [ -f "$inc/stdio.h" ] || { echo "FAIL $triple: no C headers in $inc (install the $gnu g++)" >&2; exit 1; }
  cpp=$(ls -d "$inc"/c++/[0-9]* | sort -V | tail -n 1)
  "$cxx" --target="$triple" "${isa[@]}" -x c++ -std=c++17 -c -o "$out/$triple.o" -fPIC \
    -fno-exceptions -fno-rtti -fvisibility=hidden -Wall -Wextra -Wshadow -Wno-unused-parameter \
    -Wshorten-64-to-32 -Werror -nostdinc++ -nostdlibinc -isystem "$cpp" -isystem "$cpp/$gnu" \
    -isystem "$inc" -isystem "$out/shim" -isystem "$jni" -isystem "$jni/linux" \
    -I "$root/runtime/include" "$root/targets/android/jni/octet_jni.cc"
  echo "ok   $triple targets/android/jni/octet_jni.cc ($gnu headers)"
done
