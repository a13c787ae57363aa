#!/usr/bin/env bash
# Compile-checks the kernels an Android build uses for the NDK's triples with plain
# clang, without an NDK: kernel files include only compiler headers (stdint.h,
# stddef.h, arm_neon.h, immintrin.h) and kernels/*.h headers that do the same, so
# -ffreestanding needs no sysroot.
#
#   aarch64-linux-android24      arm64-v8a     runtime/kernels/ref, runtime/kernels/neon
#   armv7a-linux-androideabi24   armeabi-v7a   the same (softfp float ABI)
#   x86_64-linux-android24       x86_64        runtime/kernels/ref, runtime/kernels/x86
#
# Each file gets the ISA flags its name asks for (__neondot: armv8.2-a+dotprod,
# __neoni8mm: armv8.6-a+i8mm, __avx2: -mavx2 -mfma, __avx512vnni: AVX-512 F, BW, VL
# and VNNI, __avx512: AVX-512 F, BW and VL, others: the baseline, with NEON on
# ARM), and the quantize/dequantize files -ffp-contract=off, as in CMake.
# Fails on any compiler error or warning; on an undefined symbol other than the
# four the compiler may call in freestanding code (memcpy, memmove, memset,
# memcmp) and the libm functions the float kernels reach through __builtin_*
# (every Android has libm; rintf: core/quant.h's rounding, on armv7, which has
# no vrintx; exp: the delta rule's decays, in double as its reference takes
# them), and the reference kernels (octet::*__ref); on a defined symbol other
# than the file's own function (octet::<file name>): an inline function or template
# of a shared header emitted as a weak symbol would be merged across files compiled
# with different ISA flags (see kernels/qs8_gemm_driver.h); on a header under
# runtime/kernels that no checked file compiles (kernel_table.h aside, which is not
# a kernel header), so every shared kernel header is checked through the kernel
# files; and, when llvm-objdump is there, if a file lacks the instruction it exists
# for.
#
# Then the hosted runtime code Android ships too (runtime/text) is compiled with
# -fsyntax-only for the same three triples against the Debian cross toolchains'
# glibc and libstdc++ headers (no NDK here: see that section for what this catches).
#
# usage: scripts/android-compile-check.sh
# env:   CLANGXX (default clang++-14), LLVM_OBJDUMP (default llvm-objdump-14),
#        LLVM_NM (default llvm-nm-14), FLATC (default flatc), FLATBUFFERS_INCLUDE
#        (the directory holding flatbuffers/, default /usr/include)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cxx=${CLANGXX:-clang++-14}
objdump=${LLVM_OBJDUMP:-llvm-objdump-14}
nm=${LLVM_NM:-llvm-nm-14}
command -v "$cxx" >/dev/null || { echo "error: $cxx not found (set CLANGXX)" >&2; exit 1; }
have_objdump=0; command -v "$objdump" >/dev/null && have_objdump=1
have_nm=0; command -v "$nm" >/dev/null && have_nm=1

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

common=(-x c++ -std=c++17 -ffreestanding -fno-exceptions -fno-rtti -O2 -fPIC
        -Wall -Wextra -Wshadow -Werror -I "$root/runtime")

shopt -s nullglob
ref_files=("$root"/runtime/kernels/ref/*.cc)
arm_files=("${ref_files[@]}" "$root"/runtime/kernels/neon/*.cc)
x86_files=("${ref_files[@]}" "$root"/runtime/kernels/x86/*.cc)
[ ${#arm_files[@]} -gt ${#ref_files[@]} ] && [ ${#x86_files[@]} -gt ${#ref_files[@]} ] ||
  { echo "error: no kernel files found under $root/runtime/kernels" >&2; exit 1; }

# march_flags <triple> <file>: the ISA flags for one file on one triple.
march_flags() {
  local triple=$1 name isa extra=""
  name=$(basename "$2" .cc)
  case "$name" in
    qs8_quantize_rows__*|qs8_dequantize_rows__*|qs8_softmax_tile__*|f32_rope__*)
      extra="-ffp-contract=off" ;;
  esac
  isa=$(march_isa_flags "$triple" "$name")
  echo "$isa${isa:+${extra:+ }}$extra"
}

# march_isa_flags <triple> <name>: the ISA part of march_flags.
march_isa_flags() {
  local triple=$1 name=$2
  case "$triple:$name" in
    aarch64*:*__neondot) echo "-march=armv8.2-a+dotprod" ;;
    aarch64*:*__neoni8mm) echo "-march=armv8.6-a+i8mm" ;;
    aarch64*:*) echo "-march=armv8-a" ;;
    armv7a*:*__neondot) echo "-march=armv8.2-a+dotprod -mfpu=neon-fp-armv8 -mfloat-abi=softfp" ;;
    armv7a*:*__neoni8mm) echo "-march=armv8.6-a+i8mm -mfpu=neon-fp-armv8 -mfloat-abi=softfp" ;;
    armv7a*:*) echo "-march=armv7-a -mfpu=neon -mfloat-abi=softfp" ;;
    x86_64*:*__avx2) echo "-mavx2 -mfma" ;;
    x86_64*:*__avx512vnni) echo "-mavx512f -mavx512bw -mavx512vl -mavx512vnni" ;;
    x86_64*:*__avx512) echo "-mavx512f -mavx512bw -mavx512vl" ;;
    x86_64*:*) echo "" ;;
  esac
}

# required_insn <file>: the instruction the file exists for ("" if none).
required_insn() {
  case "$(basename "$1" .cc)" in
    qu8s8_pv_*__neoni8mm) echo sudot ;; # u8 x s8: vsudot on AArch32
    qs8_quantize_rows__avx*) echo vcvtps2dq ;;
    qs8_dequantize_rows__avx*) echo vcvtdq2ps ;;
    f32_*__avx2|qs8_softmax_tile__avx2) echo vmaskmovps ;; # the float kernels' tails
    *__neondot) echo sdot ;;   # vsdot on AArch32
    *__neoni8mm) echo smmla ;; # vsmmla on AArch32
    *__avx2) echo vpmaddwd ;;
    *__avx512vnni) echo vpdpbusd ;;
    *) echo "" ;;
  esac
}

failures=0
checked=0
for triple in aarch64-linux-android24 armv7a-linux-androideabi24 x86_64-linux-android24; do
  case "$triple" in
    x86_64*) files=("${x86_files[@]}") ;;
    *) files=("${arm_files[@]}") ;;
  esac
  for src in "${files[@]}"; do
    rel=${src#"$root"/}
    name=$(basename "$src" .cc)
    obj="$out/$triple-$name.o"
    read -r -a flags <<<"$(march_flags "$triple" "$src")"
    if ! "$cxx" --target="$triple" "${flags[@]}" "${common[@]}" -MD -MF "$obj.d" -c "$src" -o "$obj"; then
      echo "FAIL $triple $rel: does not compile (${flags[*]})" >&2
      failures=$((failures + 1))
      continue
    fi
    note=""
    if [ "$have_nm" = 1 ]; then
      # octet::<family>__ref: a reference kernel, which some variants call for
      # rare inputs (compiled for the baseline ISA, in the same library).
      undefined=$("$nm" -u "$obj" | awk '{print $NF}' | grep -Ev '^(memcpy|memmove|memset|memcmp|expf|exp|erff|tanhf|sqrtf|sqrt|logf|powf|sinf|cosf|rintf)$' |
                  grep -Ev '^_ZN5octet[0-9]+[a-z0-9_]+__refE' || true)
      if [ -n "$undefined" ]; then
        echo "FAIL $triple $rel: needs symbols a freestanding kernel must not use:" $undefined >&2
        failures=$((failures + 1))
        continue
      fi
      # Defined external symbols, demangled: only octet::<name>(...) may be there.
      # Reference files (baseline flags, no ISA to leak) may define a family of
      # strong functions (e.g. ref/f32_elementwise__ref.cc), but nothing weak.
      if [[ $rel == */ref/* ]]; then own="^T octet::"; else own="^T octet::$name\\("; fi
      foreign=$("$nm" -C --defined-only --extern-only "$obj" | cut -d' ' -f2- |
                grep -Ev "$own" || true)
      if [ -n "$foreign" ]; then
        echo "FAIL $triple $rel: defines symbols beside octet::$name (weak ones would be merged across ISA flags):" >&2
        echo "$foreign" >&2
        failures=$((failures + 1))
        continue
      fi
    fi
    insn=$(required_insn "$src")
    if [ -n "$insn" ] && [ "$have_objdump" = 1 ]; then
      mattr=(); case "$triple" in x86_64*) ;; *) mattr=(--mattr=+dotprod,+i8mm) ;; esac
      count=$("$objdump" -d "${mattr[@]}" "$obj" | grep -Ec "[[:space:]]v?$insn[[:space:].]" || true)
      if [ "$count" -eq 0 ]; then
        echo "FAIL $triple $rel: no $insn instruction in the object code" >&2
        failures=$((failures + 1))
        continue
      fi
      note=", $count x $insn"
    fi
    echo "ok   $triple $rel (${flags[*]}$note)"
    checked=$((checked + 1))
  done
done

# Every kernel header must have been compiled through some kernel file above.
compiled=$(cat "$out"/*.d)
for header in "$root"/runtime/kernels/*.h "$root"/runtime/kernels/*/*.h; do
  rel=${header#"$root"/}
  [ "$rel" = runtime/kernels/kernel_table.h ] && continue
  if ! grep -qF "$rel" <<<"$compiled"; then
    echo "FAIL $rel: no checked kernel file includes it, so it is not compile-checked" >&2
    failures=$((failures + 1))
  else
    echo "ok   $rel (compiled through the kernel files)"
  fi
done

# The hosted runtime code that ships in the Android library too: runtime/text (the
# tokenizers and chat templates). Without an NDK there is no bionic or libc++, so
# each file is compiled with -fsyntax-only for each Android triple against the
# Debian cross toolchains' glibc and libstdc++ headers of the same architecture
# (scripts/setup.sh installs them). That catches what the triple changes (32-bit
# size_t and long on armv7a, clang's warnings with -Werror, the float ABI), not a
# declaration bionic or libc++ lacks; the android-arm64 preset with an NDK does that.
text_files=("$root"/runtime/text/*.cc)
[ ${#text_files[@]} -gt 0 ] || { echo "error: no files under $root/runtime/text" >&2; exit 1; }
flatc=${FLATC:-flatc}
fb_include=${FLATBUFFERS_INCLUDE:-/usr/include}
command -v "$flatc" >/dev/null || { echo "error: $flatc not found (set FLATC)" >&2; exit 1; }
[ -f "$fb_include/flatbuffers/flatbuffers.h" ] ||
  { echo "error: no flatbuffers/flatbuffers.h under $fb_include (set FLATBUFFERS_INCLUDE)" >&2; exit 1; }
# Only the FlatBuffers headers from the build machine's include directory (they are
# architecture-independent); its libc headers must not shadow the target's.
mkdir -p "$out/gen" "$out/fb" "$out/shim/gnu"
ln -s "$fb_include/flatbuffers" "$out/fb/flatbuffers"
"$flatc" --cpp --scoped-enums --gen-object-api -o "$out/gen" "$root/runtime/format/octet_model.fbs"
# armeabi-v7a is softfp; Debian's armhf glibc only has the hard-float stubs list,
# which names unimplemented functions and declares nothing. FlatBuffers reads the
# API level from bionic's header when __ANDROID__ is defined.
mkdir -p "$out/shim/android"
: >"$out/shim/gnu/stubs-soft.h"
printf '#pragma once\n#ifndef __ANDROID_API__\n#define __ANDROID_API__ 24\n#endif\n' \
  >"$out/shim/android/api-level.h"

# cross_headers <gnu triple> <include dir>: the -isystem flags of one toolchain
# (a cross toolchain keeps its libstdc++ target headers under c++/<ver>/<triple>,
# the build machine's own under <triple>/c++/<ver>).
cross_headers() {
  local gnu=$1 inc=$2 cxx ver
  cxx=$(ls -d "$inc"/c++/[0-9]* 2>/dev/null | sort -V | tail -n 1)
  ver=${cxx##*/}
  if [ -d "$cxx/$gnu" ]; then
    echo "-isystem $cxx -isystem $cxx/$gnu -isystem $inc"
  else
    echo "-isystem $cxx -isystem $inc/$gnu/c++/$ver -isystem $inc/$gnu -isystem $inc"
  fi
}

text_checked=0
for triple in aarch64-linux-android24 armv7a-linux-androideabi24 x86_64-linux-android24; do
  case "$triple" in
    aarch64*) gnu=aarch64-linux-gnu inc=/usr/aarch64-linux-gnu/include isa="-march=armv8-a" ;;
    armv7a*) gnu=arm-linux-gnueabihf inc=/usr/arm-linux-gnueabihf/include
             isa="-march=armv7-a -mfpu=neon -mfloat-abi=softfp" ;;
    x86_64*) gnu=x86_64-linux-gnu inc=/usr/include isa="" ;;
  esac
  if [ ! -f "$inc/stdio.h" ]; then
    echo "FAIL $triple runtime/text: no C headers in $inc (install the $gnu g++, scripts/setup.sh)" >&2
    failures=$((failures + 1))
    continue
  fi
  read -r -a hdrs <<<"$(cross_headers "$gnu" "$inc")"
  read -r -a isa_flags <<<"$isa"
  for src in "${text_files[@]}"; do
    rel=${src#"$root"/}
    if ! "$cxx" --target="$triple" "${isa_flags[@]}" -x c++ -std=c++17 -fsyntax-only \
         -fno-exceptions -fno-rtti -Wall -Wextra -Wshadow -Wno-unused-parameter -Werror \
         -nostdinc++ -nostdlibinc "${hdrs[@]}" -isystem "$out/shim" -isystem "$out/fb" \
         -I "$out/gen" -I "$root/runtime" "$src"; then
      echo "FAIL $triple $rel: does not compile (hosted runtime code)" >&2
      failures=$((failures + 1))
      continue
    fi
    echo "ok   $triple $rel (syntax, $gnu headers)"
    text_checked=$((text_checked + 1))
  done
done
checked=$((checked + text_checked))

if [ "$failures" -ne 0 ]; then
  echo "android-compile-check: $failures failure(s), $checked ok" >&2
  exit 1
fi
[ "$have_objdump" = 1 ] || echo "note: $objdump not found, instructions not checked"
[ "$have_nm" = 1 ] || echo "note: $nm not found, undefined symbols not checked"
echo "android-compile-check: $checked compilations ok ($cxx)"
