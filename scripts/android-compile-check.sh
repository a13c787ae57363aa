#!/usr/bin/env bash
# Compile-checks the kernels an Android build uses (runtime/kernels/ref and
# runtime/kernels/neon) for the NDK's two ARM triples with plain clang, without an
# NDK: kernel files include only compiler headers (stdint.h, stddef.h,
# arm_neon.h) and kernels/qs8_gemm.h, so -ffreestanding needs no sysroot.
#
#   aarch64-linux-android24      arm64-v8a
#   armv7a-linux-androideabi24   armeabi-v7a (softfp float ABI)
#
# Each file gets the -march its name asks for (__neondot: armv8.2-a+dotprod,
# __neoni8mm: armv8.6-a+i8mm, others: the baseline with NEON). Fails on any
# compiler error or warning, on an undefined symbol other than the four the
# compiler may call in freestanding code (memcpy, memmove, memset, memcmp), and,
# when llvm-objdump is there, if a dotprod/i8mm file lacks its instruction.
#
# usage: scripts/android-compile-check.sh
# env:   CLANGXX (default clang++-14), LLVM_OBJDUMP (default llvm-objdump-14),
#        LLVM_NM (default llvm-nm-14)
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
files=("$root"/runtime/kernels/ref/*.cc "$root"/runtime/kernels/neon/*.cc)
[ ${#files[@]} -gt 0 ] || { echo "error: no kernel files found under $root/runtime/kernels" >&2; exit 1; }

# march_flags <triple> <file>: the ISA flags for one file on one triple.
march_flags() {
  local triple=$1 name
  name=$(basename "$2" .cc)
  case "$triple:$name" in
    aarch64*:*__neondot) echo "-march=armv8.2-a+dotprod" ;;
    aarch64*:*__neoni8mm) echo "-march=armv8.6-a+i8mm" ;;
    aarch64*:*) echo "-march=armv8-a" ;;
    armv7a*:*__neondot) echo "-march=armv8.2-a+dotprod -mfpu=neon-fp-armv8 -mfloat-abi=softfp" ;;
    armv7a*:*__neoni8mm) echo "-march=armv8.6-a+i8mm -mfpu=neon-fp-armv8 -mfloat-abi=softfp" ;;
    armv7a*:*) echo "-march=armv7-a -mfpu=neon -mfloat-abi=softfp" ;;
  esac
}

# required_insn <file>: the instruction the file exists for ("" if none).
required_insn() {
  case "$(basename "$1" .cc)" in
    *__neondot) echo sdot ;;   # vsdot on AArch32
    *__neoni8mm) echo smmla ;; # vsmmla on AArch32
    *) echo "" ;;
  esac
}

failures=0
checked=0
for triple in aarch64-linux-android24 armv7a-linux-androideabi24; do
  for src in "${files[@]}"; do
    rel=${src#"$root"/}
    obj="$out/$triple-$(basename "$src" .cc).o"
    read -r -a flags <<<"$(march_flags "$triple" "$src")"
    if ! "$cxx" --target="$triple" "${flags[@]}" "${common[@]}" -c "$src" -o "$obj"; then
      echo "FAIL $triple $rel: does not compile (${flags[*]})" >&2
      failures=$((failures + 1))
      continue
    fi
    note=""
    if [ "$have_nm" = 1 ]; then
      undefined=$("$nm" -u "$obj" | awk '{print $NF}' | grep -Ev '^(memcpy|memmove|memset|memcmp)$' || true)
      if [ -n "$undefined" ]; then
        echo "FAIL $triple $rel: needs symbols a freestanding kernel must not use:" $undefined >&2
        failures=$((failures + 1))
        continue
      fi
    fi
    insn=$(required_insn "$src")
    if [ -n "$insn" ] && [ "$have_objdump" = 1 ]; then
      count=$("$objdump" -d --mattr=+dotprod,+i8mm "$obj" | grep -Ec "[[:space:]]v?$insn[[:space:].]" || true)
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

if [ "$failures" -ne 0 ]; then
  echo "android-compile-check: $failures failure(s), $checked ok" >&2
  exit 1
fi
[ "$have_objdump" = 1 ] || echo "note: $objdump not found, instructions not checked"
[ "$have_nm" = 1 ] || echo "note: $nm not found, undefined symbols not checked"
echo "android-compile-check: $checked compilations ok ($cxx)"
