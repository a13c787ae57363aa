#!/usr/bin/env bash
# scripts/setup.sh [--demo]: what octet needs on a fresh Debian 12 (bookworm) machine.
#
#   --demo  only what the host build of the library and the command-line tools
#           needs (scripts/demo.sh): compilers, cmake, ninja, XNNPACK, pthreadpool,
#           cpuinfo, FlatBuffers, nlohmann-json, Eigen.
#   (none)  everything the tests need too (scripts/test-all.sh, CI):
#     1. Debian packages (apt-get, --no-install-recommends): the demo's, plus
#        clang-14 + libFuzzer + llvm tools, aarch64 and armhf cross g++, qemu-user,
#        doctest, cairo (attention heatmaps), tools (valgrind, hyperfine, perf),
#        python3-numpy, a JDK (the Java binding and its tests on the host JVM),
#        groovy (a syntax check of the Android Gradle files), and for the
#        packages suite (scripts/test-packages.sh) pkg-config, mmdebstrap (a
#        fresh Debian root; cpack's DEB generator itself needs nothing beyond
#        cmake, and dpkg-deb is part of dpkg) and mount (the root's tmpfs and
#        bind mounts; not part of a minimal Debian root).
#        Skipped when every package is already installed.
#     2. The arm64 and armhf target libraries, unpacked into .deps/arm64 and
#        .deps/armhf by scripts/fetch-target-debs.sh (skipped when present).
#
# Idempotent: a second run does no network access and takes about a second.
# Runs as root (CI) or through sudo when it is available.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

PROFILE=all
case "${1:-}" in
  "") ;;
  --demo) PROFILE=demo ;;
  *) die "unknown option '$1' (usage: scripts/setup.sh [--demo])" ;;
esac

# g++ rather than build-essential: the presets build with Ninja, and dpkg-dev's
# perl stack would add a third to a fresh machine's download.
DEMO_PACKAGES=(
  g++ cmake ninja-build
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libflatbuffers-dev flatbuffers-compiler nlohmann-json3-dev libeigen3-dev
)
PACKAGES=("${DEMO_PACKAGES[@]}")
if [ "$PROFILE" = all ]; then
  PACKAGES+=(
    build-essential doctest-dev libcairo2-dev
    g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user
    clang-14 libclang-rt-14-dev lld-14 llvm-14
    valgrind hyperfine linux-perf
    python3-numpy
    default-jdk-headless groovy
    pkg-config mmdebstrap mount
    ca-certificates debian-archive-keyring
  )
fi

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
if [ "$PROFILE" = demo ]; then
  say "done (demo profile: the host build only)"
  exit 0
fi
for arch in arm64 armhf; do
  say "target libraries for $arch -> .deps/$arch"
  bash "$ROOT/scripts/fetch-target-debs.sh" "$arch" "$ROOT/.deps/$arch"
done

say "done. Next: scripts/test-all.sh (or: cmake --preset host && cmake --build --preset host && ctest --preset host)"
