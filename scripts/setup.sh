#!/usr/bin/env bash
# scripts/setup.sh: everything octet needs on a fresh Debian 12 (bookworm) machine.
#
#   1. Debian packages (apt-get, --no-install-recommends): compilers (host gcc,
#      clang-14 + libFuzzer + llvm tools, aarch64 and armhf cross g++), cmake, ninja,
#      qemu-user, the libraries (XNNPACK, pthreadpool, cpuinfo, FlatBuffers,
#      doctest, nlohmann-json), tools (valgrind, hyperfine, perf) and
#      python3-numpy. Skipped when every package is already installed.
#   2. The arm64 and armhf target libraries, unpacked into .deps/arm64 and
#      .deps/armhf by scripts/fetch-target-debs.sh (skipped when present).
#
# Idempotent: a second run does no network access and takes about a second.
# Runs as root (CI) or through sudo when it is available.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

PACKAGES=(
  build-essential cmake ninja-build
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libflatbuffers-dev flatbuffers-compiler doctest-dev nlohmann-json3-dev
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user
  clang-14 libclang-rt-14-dev lld-14 llvm-14
  valgrind hyperfine linux-perf
  python3-numpy
  libcairo2-dev
  ca-certificates debian-archive-keyring
)

# shellcheck disable=SC1091
[ -r /etc/os-release ] && . /etc/os-release
if [ "${ID:-}" != debian ] || [ "${VERSION_CODENAME:-}" != bookworm ]; then
  say "warning: this is ${PRETTY_NAME:-an unknown system}; the script is made for Debian 12 (bookworm)"
fi

if [ "$(id -u)" = 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null; then
  SUDO=(sudo)
else
  SUDO=(__need_root__)
fi

# --- 1. packages ----------------------------------------------------------------
missing=()
for p in "${PACKAGES[@]}"; do
  if [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" != "ii " ]; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  say "all ${#PACKAGES[@]} Debian packages are installed"
else
  [ "${SUDO[*]}" != __need_root__ ] || die "${#missing[@]} packages missing (${missing[*]}); run as root or install sudo"
  say "installing ${#missing[@]} Debian packages: ${missing[*]}"
  APT=(env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600)
  t0=$SECONDS
  "${SUDO[@]}" "${APT[@]}" update
  "${SUDO[@]}" "${APT[@]}" install -y --no-install-recommends "${missing[@]}"
  say "packages installed in $((SECONDS - t0)) s"
fi

# --- 2. target libraries for the cross builds ---------------------------------------
for arch in arm64 armhf; do
  say "target libraries for $arch -> .deps/$arch"
  bash "$ROOT/scripts/fetch-target-debs.sh" "$arch" "$ROOT/.deps/$arch"
done

say "done. Next: scripts/test-all.sh (or: cmake --preset host && cmake --build --preset host && ctest --preset host)"
