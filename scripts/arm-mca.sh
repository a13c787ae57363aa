#!/usr/bin/env bash
# scripts/arm-mca.sh: a static speed model of the NEON kernels on a Raspberry Pi 4
# (Cortex-A72) and 5 (Cortex-A76), and from it a W2 tokens/s prediction. A model,
# not a measurement: see README.md, "ARM performance model".
#
#   scripts/arm-mca.sh [--only REGEX] [--all-loops] [--json FILE] [--no-predict]
#
# 1. Configures the rpi-aarch64 and rpi-armhf presets (configure only, no build)
#    into build/mca-a64 and build/mca-a32, for their compile commands: every
#    kernel file is compiled exactly as the preset compiles it (-O3 and the
#    file's own ISA flags from runtime/kernels/CMakeLists.txt), but to assembly.
# 2. scripts/arm_mca.py finds each file's hot loop (the innermost loop with the
#    most multiply-accumulate lanes) and runs llvm-mca on it for the Pi 4
#    (-mcpu=cortex-a72, AArch64 and AArch32) and the Pi 5 (Neoverse N1 model,
#    the server core built on the A76 microarchitecture: LLVM's cortex-a76 entry
#    falls back to its Cortex-A57 model). Assembly goes to build/mca-asm/.
#
# Needs: the cross compilers and target libraries of scripts/setup.sh (the
# presets' configure step needs .deps/), python3, and llvm-mca. llvm-mca is
# optional tooling, not installed by setup.sh: LLVM 17 or newer is wanted for
# the Pi 5 (Debian 12: apt-get install llvm-19); with LLVM 14 (llvm-14, which
# setup.sh installs) the Pi 5 rows use the A57 model and are marked so.
# Set MCA=/path/to/llvm-mca to choose one.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { printf 'arm-mca: error: %s\n' "$*" >&2; exit 1; }

mca=${MCA:-}
if [ -z "$mca" ]; then
  for c in llvm-mca-19 llvm-mca-18 llvm-mca-17 llvm-mca llvm-mca-16 llvm-mca-15 llvm-mca-14; do
    if command -v "$c" >/dev/null; then mca=$c; break; fi
  done
fi
[ -n "$mca" ] || die "llvm-mca not found. On Debian 12: apt-get install llvm-19 (LLVM 17+ has the
Neoverse N1 model used for the Pi 5's Cortex-A76; llvm-14 works but models the A76 as an A57)."
command -v aarch64-linux-gnu-g++ >/dev/null && command -v arm-linux-gnueabihf-g++ >/dev/null \
  || die "the cross compilers are missing: run scripts/setup.sh"
py=python3   # the standard library only

for p in a64:rpi-aarch64 a32:rpi-armhf; do
  dir=build/mca-${p%%:*}
  if [ ! -f "$dir/compile_commands.json" ] || [ runtime/kernels/CMakeLists.txt -nt "$dir/compile_commands.json" ]; then
    cmake --preset "${p#*:}" -B "$dir" >"$dir.configure.log" 2>&1 \
      || die "cmake --preset ${p#*:} failed (see $dir.configure.log; scripts/setup.sh fetches .deps/)"
  fi
done

predict=(--all-loops --predict)
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --no-predict) predict=() ;;
    *) args+=("$1") ;;
  esac
  shift
done

exec "$py" scripts/arm_mca.py --mca "$mca" --asm-dir build/mca-asm \
  --db a64=build/mca-a64/compile_commands.json --db a32=build/mca-a32/compile_commands.json \
  "${predict[@]}" "${args[@]}"
