#!/usr/bin/env bash
# scripts/test-packages.sh [preset ...]: the `packages` suite of scripts/test-all.sh.
#
# Builds the .debs of the host, rpi-aarch64 and rpi-armhf presets (cpack; the
# build trees build/<preset> are reused, and only the packaged targets are built
# when they are missing or stale) and checks them:
#   every .deb (amd64, arm64, armhf)
#     - liboctet0, liboctet-dev and octet-tools exist, with the right Architecture;
#     - every packaged ELF file has the architecture's machine (readelf -h);
#     - every NEEDED library of every packaged ELF file is provided by a package
#       the .deb Depends on (libc6 included): the library's package is found with
#       dpkg -S (the host's libraries and the cross compilers' libc6-<arch>-cross,
#       ...) or, for the arm libraries unpacked in .deps/, a short table;
#     - liboctet.so has SONAME liboctet.so.0, exports only octet_* symbols, and
#       exactly the functions its packaged headers declare (scripts/check-exports.sh);
#   the unpacked packages (dpkg-deb -x), per architecture, under qemu-user for arm:
#     - the `octet` CLI runs a model (models/demo/tiny-decoder.octet);
#     - tests/packaging/consumer/app.c, compiled against the unpacked -dev files
#       with the target's compiler, linked to liboctet.so and to liboctet.a, runs it;
#   the host's `cmake --install --prefix DIR` tree (relocatable):
#     - the consumer project builds with find_package(octet) (octet::octet and
#       octet::octet_static) and with pkg-config (octet, octet-static) and runs;
#   a fresh Debian 12 root (mmdebstrap --variant=apt with g++, make, cmake and
#   pkg-config, as root, in a tmpfs):
#     - apt-get installs the amd64 .debs (their Depends from the mirror); the
#       consumer project builds there with find_package and with plain
#       `cc ... $(pkg-config ...)`, shared and static, and runs; the installed
#       `octet run MODEL --ids 1,2,3` runs.
#   The bootstrapped root is kept for 7 days in ~/.cache/octet/packages-root/
#   (OCTET_CACHE_DIR) and used read-only under an overlay, so every run starts
#   from it unchanged; OCTET_PACKAGES_ROOT_CACHE=0 bootstraps a new one each run
#   (about 95 s more on this 2-core machine).
#
# The fresh root needs root (chroot, bind mounts) and the Debian mirror (read at
# run time from the machine's apt sources, or OCTET_DEBIAN_MIRROR=<uri>). Without
# either the suite FAILS; OCTET_PACKAGES_NO_CHROOT=1 skips only that part (loudly).
# Jobs: OCTET_JOBS (default: every core). Work files: build/test-packages/.
# Prints "N passed, N failed" last; the exit status is non-zero on any failure.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$(pwd)
JOBS=${OCTET_JOBS:-$(nproc 2>/dev/null || echo 2)}
NO_CHROOT=${OCTET_PACKAGES_NO_CHROOT:-0}
WORK="$ROOT/build/test-packages"
MODEL="$ROOT/models/demo/tiny-decoder.octet"
CONSUMER="$ROOT/tests/packaging/consumer"
# What the consumer prints for the model and ids 1,2,3 (a 256-token vocabulary).
CONSUMER_OK='output \[1, 3, 256\], finite'
CLI_OK='logits float32 \[1, 3, 256\]'

PASSED=0
FAILED=0
FAILURES=()
T0=$SECONDS

say() { printf 'test-packages: %s\n' "$*"; }
# lap NAME: the seconds since the previous lap, for the closing times line.
LAPS="" LAP_T=$SECONDS
lap() { LAPS+="$1 $((SECONDS - LAP_T)) s, "; LAP_T=$SECONDS; }
pass() { PASSED=$((PASSED + 1)); printf '  ok    %s\n' "$1"; }
fail() {
  FAILED=$((FAILED + 1)); FAILURES+=("$1")
  printf '  FAIL  %s\n' "$1"
  [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/        /'
}
# check NAME CMD...: runs CMD, a pass when it exits 0; its output shows on failure.
check() {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$out"; fi
}
# check_output NAME REGEX CMD...: CMD exits 0 and prints a line matching REGEX.
check_output() {
  local name=$1 re=$2 out
  shift 2
  if out=$("$@" 2>&1) && grep -Eq -e "$re" <<<"$out"; then
    pass "$name: $(grep -E -e "$re" <<<"$out" | head -n 1)"
  else
    fail "$name (expected /$re/)" "$out"
  fi
}
loud() {
  printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
  printf '!!! %s\n' "$@"
  printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n'
}

# preset -> Debian architecture, GNU triple, readelf machine, qemu
declare -A DEB_ARCH=([host]=amd64 [rpi-aarch64]=arm64 [rpi-armhf]=armhf)
declare -A TRIPLE=([host]=x86_64-linux-gnu [rpi-aarch64]=aarch64-linux-gnu
                   [rpi-armhf]=arm-linux-gnueabihf)
declare -A MACHINE=([host]='Advanced Micro Devices X86-64' [rpi-aarch64]=AArch64 [rpi-armhf]=ARM)
declare -A QEMU=([host]='' [rpi-aarch64]=qemu-aarch64 [rpi-armhf]=qemu-arm)
declare -A CC_OF=([host]=cc [rpi-aarch64]=aarch64-linux-gnu-gcc [rpi-armhf]=arm-linux-gnueabihf-gcc)
PRESETS=(host rpi-aarch64 rpi-armhf)
if [ $# -gt 0 ]; then   # a subset, by hand: scripts/test-packages.sh host
  for p in "$@"; do
    [ -n "${DEB_ARCH[$p]:-}" ] || { say "error: unknown preset '$p' (known: ${PRESETS[*]})"; exit 2; }
  done
  PRESETS=("$@")
fi
[ "$(uname -m)" = x86_64 ] || { say "error: the host preset is taken to be amd64; this is $(uname -m)"; exit 2; }

# The packages of one architecture's libraries that are not in dpkg's database
# here (unpacked into .deps/<arch> by scripts/fetch-target-debs.sh).
declare -A DEPS_TABLE=([libXNNPACK.so.0]=libxnnpack0 [libpthreadpool.so.0]=libpthreadpool0
                       [libcpuinfo.so.0]=libcpuinfo0)

rm -rf "$WORK"
mkdir -p "$WORK"

# --- 1. build the packaged targets and the .debs ----------------------------------------
declare -A DEBS   # preset -> directory with its .debs
for p in "${PRESETS[@]}"; do
  say "$p: build + cpack"
  log="$WORK/$p-build.log"
  t=$SECONDS
  if {
       { [ -f "build/$p/CMakeCache.txt" ] || cmake --preset "$p"; } &&
       cmake --build --preset "$p" -j "$JOBS" --target octet_shared octet_static octet-cli octet-convert &&
       rm -f "build/$p/packages/"*.deb &&
       (cd "build/$p" && cpack --config CPackConfig.cmake)
     } >"$log" 2>&1; then
    pass "$p: .debs built in $((SECONDS - t)) s ($(cd "build/$p/packages" && ls -- *.deb | tr '\n' ' '))"
    DEBS[$p]="$ROOT/build/$p/packages"
    grep 'Depends:' "$log" | sed 's/^-- /        /'
  else
    fail "$p: build + cpack (log: $log)" "$(tail -n 20 "$log")"
  fi
done

lap "build + cpack"

# --- 2. static checks of every .deb -------------------------------------------------------
# resolve_owners P: OWNERS[P/soname] = the package that provides each library
# that an ELF file of P's packages needs ("" when unknown): one of our own
# packages (liboctet.so.0), else dpkg -S (the host's libraries; the cross
# compilers' libc6-<arch>-cross, ... for arm), else DEPS_TABLE for .deps/.
declare -A OWNERS
resolve_owners() {
  local p=$1 arch=${DEB_ARCH[$1]} triple=${TRIPLE[$1]} so f d owner path
  local -a paths=()
  local -A path_of=()
  for so in $(find "$WORK/$p/pkg" -type f -exec readelf -dW {} \; 2>/dev/null |
              sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
    OWNERS[$p/$so]=""
    for d in "$WORK/$p/pkg"/*/; do
      [ -e "$d/usr/lib/$triple/$so" ] && OWNERS[$p/$so]=$(basename "$d")
    done
    [ -z "${OWNERS[$p/$so]}" ] || continue
    if [ "$p" = host ]; then
      for f in "/lib/$triple/$so" "/usr/lib/$triple/$so"; do   # dpkg knows one of them
        [ -e "$f" ] && { paths+=("$f"); path_of[$f]=$so; }
      done
    elif [ -e "/usr/$triple/lib/$so" ]; then
      paths+=("/usr/$triple/lib/$so"); path_of[/usr/$triple/lib/$so]=$so
    fi
  done
  if [ ${#paths[@]} -gt 0 ]; then
    while IFS= read -r line; do   # "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6"
      owner=${line%%: *} path=${line#*: }
      owner=${owner%%:*}             # libc6:amd64 -> libc6
      owner=${owner%-"$arch"-cross}  # libc6-arm64-cross -> libc6
      [ -n "${path_of[$path]:-}" ] && OWNERS[$p/${path_of[$path]}]=$owner
    done < <(dpkg -S "${paths[@]}" 2>/dev/null)
  fi
  for so in "${!DEPS_TABLE[@]}"; do
    if [ -n "${OWNERS[$p/$so]+set}" ] && [ -z "${OWNERS[$p/$so]}" ] &&
       [ -e "$ROOT/.deps/$arch/usr/lib/$triple/$so" ]; then
      OWNERS[$p/$so]=${DEPS_TABLE[$so]}
    fi
  done
}

for p in "${PRESETS[@]}"; do
  [ -n "${DEBS[$p]:-}" ] || continue
  arch=${DEB_ARCH[$p]} triple=${TRIPLE[$p]}
  say "$p: checks of the $arch .debs"
  mkdir -p "$WORK/$p/pkg" "$WORK/$p/root"
  for deb in "${DEBS[$p]}"/*.deb; do
    name=$(dpkg-deb -f "$deb" Package)
    dpkg-deb -x "$deb" "$WORK/$p/pkg/$name"
    dpkg-deb -x "$deb" "$WORK/$p/root"
  done
  resolve_owners "$p"
  for name in liboctet0 liboctet-dev octet-tools; do
    deb=$(ls "${DEBS[$p]}/${name}_"*"_$arch.deb" 2>/dev/null | head -n 1)
    if [ -z "$deb" ]; then fail "$p: ${name}_*_$arch.deb exists"; continue; fi
    got=$(dpkg-deb -f "$deb" Architecture)
    if [ "$got" = "$arch" ]; then pass "$p: $name Architecture $got"; else fail "$p: $name Architecture is '$got', not $arch"; fi
    depends=$(dpkg-deb -f "$deb" Depends)
    dep_names=" $(sed -E 's/\([^)]*\)//g; s/[,|]/ /g' <<<"$depends" | xargs) "
    # every ELF file in the package
    problems=""
    nelf=0
    while IFS= read -r -d '' f; do
      [ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] || continue
      nelf=$((nelf + 1))
      rel=${f#"$WORK/$p/pkg/$name"}
      m=$(readelf -hW "$f" | sed -n 's/^ *Machine: *//p')
      [ "$m" = "${MACHINE[$p]}" ] || problems+="$rel: machine '$m', not '${MACHINE[$p]}'"$'\n'
      if [ "$p" = rpi-armhf ] && ! readelf -hW "$f" | grep -q 'hard-float ABI'; then
        problems+="$rel: not hard-float"$'\n'
      fi
      for so in $(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        owner=${OWNERS[$p/$so]:-}
        if [ -z "$owner" ]; then
          problems+="$rel: NEEDED $so: no package found for it"$'\n'
        elif [[ "$dep_names" != *" $owner "* ]]; then
          problems+="$rel: NEEDED $so (package $owner) is not in Depends: $depends"$'\n'
        fi
      done
    done < <(find "$WORK/$p/pkg/$name" -type f -print0)
    if [ -z "$problems" ]; then
      pass "$p: $name: $nelf ELF file(s) are ${MACHINE[$p]}, every NEEDED library is in Depends (${depends:-none})"
    else
      fail "$p: $name: ELF machine / NEEDED" "$problems"
    fi
  done

  so="$WORK/$p/root/usr/lib/$triple/liboctet.so.0"
  if [ -f "$so" ]; then
    soname=$(readelf -dW "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = liboctet.so.0 ] && pass "$p: SONAME $soname" || fail "$p: SONAME is '$soname', not liboctet.so.0"
    exported=$(readelf --dyn-syms -W "$so" |
               awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && ($4 == "FUNC" || $4 == "OBJECT") {print $8}' |
               sed 's/@.*//' | sort -u)
    others=$(grep -v '^octet_' <<<"$exported")
    if [ -z "$others" ] && grep -qx octet_version <<<"$exported"; then
      pass "$p: liboctet.so exports only octet_* ($(wc -l <<<"$exported") symbols)"
    else
      fail "$p: liboctet.so exports symbols other than octet_*" "$others"
    fi
    # Exactly the functions the packaged headers declare (the ctest abi.exports_* rule).
    headers=("$WORK/$p/root/usr/include/octet/octet.h" "$WORK/$p/root/usr/include/octet/octet.hpp")
    if report=$("$ROOT/scripts/check-exports.sh" "$so" "${headers[@]}" 2>&1); then
      pass "$p: liboctet.so exports exactly what usr/include/octet declares"
    else
      fail "$p: liboctet.so's exports and usr/include/octet's declarations differ" "$report"
    fi
  else
    fail "$p: liboctet.so.0 in liboctet0"
  fi
done

lap "checks"

# --- 3. the unpacked packages run (qemu-user for arm) ----------------------------------
for p in "${PRESETS[@]}"; do
  [ -n "${DEBS[$p]:-}" ] || continue
  arch=${DEB_ARCH[$p]} triple=${TRIPLE[$p]} r="$WORK/$p/root" cc=${CC_OF[$p]}
  say "$p: the unpacked packages run"
  libs="$r/usr/lib/$triple"
  run=(env "LD_LIBRARY_PATH=$libs")
  link_extra=()
  if [ -n "${QEMU[$p]}" ]; then
    # as the toolchain files' CMAKE_CROSSCOMPILING_EMULATOR
    tlib="$ROOT/.deps/$arch/usr/lib/$triple"
    run=("${QEMU[$p]}" -cpu max -L "/usr/$triple" -E "LD_LIBRARY_PATH=$libs:$tlib")
    link_extra=(-L"$tlib" -Wl,-rpath-link,"$tlib")
  fi
  check_output "$p: octet run (unpacked octet-tools)" "$CLI_OK" \
    "${run[@]}" "$r/usr/bin/octet" run "$MODEL" --ids 1,2,3
  # The consumer against the unpacked -dev files, with the .pc files' flags
  # (PKG_CONFIG_SYSROOT_DIR puts the unpacked root in front of /usr).
  pc=(env PKG_CONFIG_SYSROOT_DIR="$r" PKG_CONFIG_LIBDIR="$libs/pkgconfig" pkg-config)
  if flags=$("${pc[@]}" --cflags --libs octet) && sflags=$("${pc[@]}" --cflags --libs octet-static); then
    check "$p: cc app.c \$(pkg-config --cflags --libs octet)" \
      "$cc" -o "$WORK/$p/consumer_shared" "$CONSUMER/app.c" $flags "${link_extra[@]}"
    check_output "$p: consumer linked to liboctet.so runs" "$CONSUMER_OK" \
      "${run[@]}" "$WORK/$p/consumer_shared" "$MODEL"
    check "$p: cc app.c \$(pkg-config --cflags --libs octet-static)" \
      "$cc" -o "$WORK/$p/consumer_static" "$CONSUMER/app.c" $sflags "${link_extra[@]}"
    if readelf -dW "$WORK/$p/consumer_static" 2>/dev/null | grep -q 'liboctet\.so'; then
      fail "$p: the static consumer needs liboctet.so"
    fi
    check_output "$p: consumer linked to liboctet.a runs" "$CONSUMER_OK" \
      "${run[@]}" "$WORK/$p/consumer_static" "$MODEL"
  else
    fail "$p: pkg-config octet / octet-static in the unpacked -dev package"
  fi
done

lap "unpacked runs"

# --- 4. the host's relocatable `cmake --install` tree --------------------------------
say "host: cmake --install build/host --prefix DIR, and a consumer project"
P="$WORK/install-prefix"
if [ -f build/host/CMakeCache.txt ] && cmake --install build/host --prefix "$P" >"$WORK/install.log" 2>&1; then
  version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' build/host/CMakeCache.txt)
  want=(include/octet/octet.h include/octet/octet.hpp lib/liboctet.so lib/liboctet.so.0
        "lib/liboctet.so.${version:-unknown}" lib/liboctet.a lib/cmake/octet/octetConfig.cmake
        lib/cmake/octet/octetConfigVersion.cmake lib/cmake/octet/octetTargets.cmake
        lib/pkgconfig/octet.pc lib/pkgconfig/octet-static.pc bin/octet bin/octet-convert)
  missing=""
  for f in "${want[@]}"; do [ -e "$P/$f" ] || missing+="$f "; done
  [ -z "$missing" ] && pass "install tree: ${#want[@]} files in place" || fail "install tree: missing $missing"
  if grep -rqsF -e "$ROOT" -e "$P" "$P/lib/cmake" "$P/lib/pkgconfig"; then
    fail "install tree: the CMake package or .pc files name a build or install path" \
         "$(grep -rnF -e "$ROOT" -e "$P" "$P/lib/cmake" "$P/lib/pkgconfig")"
  else
    pass "install tree: the CMake package and .pc files name no absolute path"
  fi
  # Moved after installation: it must still work (relocatable).
  mv "$P" "$P.moved" && P="$P.moved"
  B="$WORK/consumer-cmake"
  if cmake -S "$CONSUMER" -B "$B" -G Ninja -DCMAKE_PREFIX_PATH="$P" >"$WORK/consumer-cmake.log" 2>&1 &&
     cmake --build "$B" >>"$WORK/consumer-cmake.log" 2>&1; then
    pass "install tree: the consumer builds with find_package(octet) (octet::octet, octet::octet_static)"
    check_output "install tree: octet::octet consumer runs" "$CONSUMER_OK" \
      env LD_LIBRARY_PATH="$P/lib" "$B/consumer_shared" "$MODEL"
    check_output "install tree: octet::octet_static consumer runs" "$CONSUMER_OK" "$B/consumer_static" "$MODEL"
  else
    fail "install tree: the consumer builds with find_package(octet)" "$(tail -n 20 "$WORK/consumer-cmake.log")"
  fi
  export PKG_CONFIG_PATH="$P/lib/pkgconfig"
  check "install tree: cc app.c \$(pkg-config --cflags --libs octet)" \
    cc -o "$WORK/pc_shared" "$CONSUMER/app.c" $(pkg-config --cflags --libs octet)
  check_output "install tree: that consumer runs" "$CONSUMER_OK" \
    env LD_LIBRARY_PATH="$P/lib" "$WORK/pc_shared" "$MODEL"
  check "install tree: cc app.c \$(pkg-config --cflags --libs octet-static)" \
    cc -o "$WORK/pc_static" "$CONSUMER/app.c" $(pkg-config --cflags --libs octet-static)
  check_output "install tree: that consumer runs" "$CONSUMER_OK" "$WORK/pc_static" "$MODEL"
  unset PKG_CONFIG_PATH
else
  fail "install tree: cmake --install build/host" "$(tail -n 20 "$WORK/install.log" 2>/dev/null)"
fi

lap "install tree"

# --- 5. a fresh Debian 12 root: apt installs the amd64 .debs --------------------------
# The machine's Debian mirror (not the security one), as scripts/fetch-target-debs.sh.
find_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                       if ($i !~ /security/) { print $i; exit } }' "$f"
  done
}

ROOTDIR=""   # the fresh root's directory: merged/ (the root), upper/ and work/ (overlay)
R=""         # the root itself
MOUNTS=()
cleanup_root() {
  local i m
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
    m=${MOUNTS[$i]}
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "warning: could not unmount $m"
  done
  MOUNTS=()
  if [ -n "$ROOTDIR" ] && [ -d "$ROOTDIR" ]; then
    # never delete through a mount that is still there
    if grep -qF -e " $ROOTDIR/" -e " $ROOTDIR " /proc/self/mountinfo; then
      say "warning: something is still mounted under $ROOTDIR; left in place"
    else
      rm -rf --one-file-system "$ROOTDIR"
    fi
  fi
  ROOTDIR="" R=""
}
trap cleanup_root EXIT
trap 'cleanup_root; exit 130' INT TERM

# bootstrap DIR LOG: mmdebstrap MM_OPTS bookworm DIR MM_MIRRORS, a bare Debian 12
# with apt and the packages MM_OPTS include; each log line gets the seconds since
# the start.
bootstrap() {
  local dir=$1 log=$2 t=$SECONDS
  mmdebstrap "${MM_OPTS[@]}" bookworm "$dir" "${MM_MIRRORS[@]}" 2>&1 |
    while IFS= read -r line; do printf '%4d s  %s\n' $((SECONDS - t)) "$line"; done >"$log"
}

chroot_suite() {
  if [ "$(id -u)" != 0 ]; then
    loud "The fresh-root part needs root (chroot, bind mounts) and this is uid $(id -u)." \
         "Run as root, or set OCTET_PACKAGES_NO_CHROOT=1 to skip only that part."
    fail "fresh root: needs root"
    return
  fi
  if [ -z "${DEBS[host]:-}" ]; then fail "fresh root: no amd64 .debs to install"; return; fi
  command -v mmdebstrap >/dev/null || { fail "fresh root: mmdebstrap missing (scripts/setup.sh installs it)"; return; }
  local uri
  uri=${OCTET_DEBIAN_MIRROR:-$(find_mirror | head -n 1)}
  [ -n "$uri" ] || { fail "fresh root: no Debian mirror in /etc/apt/sources.list{,.d/*}; set OCTET_DEBIAN_MIRROR"; return; }

  local t=$SECONDS extra="" need_update=0
  case "$uri" in https:*) extra=",ca-certificates" ;; esac
  # dpkg without fsync: the root is thrown away. (No path-exclude options: with
  # them mmdebstrap filters every file it extracts, ten times slower.)
  MM_OPTS=(--variant=apt --include="g++,make,cmake,pkg-config$extra"
           --skip=cleanup/apt/lists --dpkgopt=force-unsafe-io)
  MM_MIRRORS=("deb $uri bookworm main" "deb $uri bookworm-updates main")
  # The root's files live in memory (a tmpfs): on a busy virtual disk mmdebstrap
  # spends minutes writing them, on a tmpfs seconds.
  ROOTDIR=$(mktemp -d "$WORK/fresh-root.XXXXXX")
  if mount -t tmpfs -o size=6g,mode=0755 octet-fresh-root "$ROOTDIR"; then
    MOUNTS+=("$ROOTDIR")
  else
    say "no tmpfs: the fresh root goes to the disk (slower)"
  fi
  R="$ROOTDIR/merged"
  mkdir -p "$R"
  local fail_bootstrap=(loud "mmdebstrap could not make a Debian 12 root from $uri (mirror unreachable?)."
                        "OCTET_PACKAGES_NO_CHROOT=1 skips only that part.")
  if [ "${OCTET_PACKAGES_ROOT_CACHE:-1}" = 1 ]; then
    # The bootstrapped root (bare Debian 12 + g++, make, cmake, pkg-config; no
    # octet) is kept for 7 days outside the repo and used read-only, under an
    # overlay: every run still starts from it unchanged, and apt-get update runs first.
    local cache base key
    cache=${OCTET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/octet}/packages-root
    key=$(printf '%s\n' "${MM_OPTS[@]}" "${MM_MIRRORS[@]}" | sha256sum | cut -c 1-16)
    base="$cache/bookworm-$key"
    if [ -f "$base/.octet-base-root" ] && [ -z "$(find "$base/.octet-base-root" -mtime +6)" ]; then
      pass "fresh root: base root (Debian 12 + g++, make, cmake, pkg-config) from the cache, $base"
    else
      mkdir -p "$cache"
      rm -rf --one-file-system "$base" "$base".partial.*
      if ! bootstrap "$ROOTDIR/base" "$WORK/mmdebstrap.log"; then
        "${fail_bootstrap[@]}"
        fail "fresh root: mmdebstrap bookworm (log: $WORK/mmdebstrap.log)" \
             "$(tail -n 15 "$WORK/mmdebstrap.log")"
        return
      fi
      local t_copy=$SECONDS
      touch "$ROOTDIR/base/.octet-base-root"
      if cp -a "$ROOTDIR/base" "$base.partial.$$" && mv "$base.partial.$$" "$base"; then
        pass "fresh root: mmdebstrap --variant=apt bookworm + g++, make, cmake, pkg-config in $((t_copy - t)) s (cached in $base: $((SECONDS - t_copy)) s)"
      else
        rm -rf --one-file-system "$base.partial.$$"
        fail "fresh root: copy of the new base root to $base"
        return
      fi
      rm -rf --one-file-system "$ROOTDIR/base"
    fi
    mkdir -p "$ROOTDIR/upper" "$ROOTDIR/work"
    if mount -t overlay overlay -o "lowerdir=$base,upperdir=$ROOTDIR/upper,workdir=$ROOTDIR/work" "$R" 2>/dev/null; then
      MOUNTS+=("$R")
    else
      say "no overlayfs here: copying the base root"
      cp -a "$base/." "$R/" || { fail "fresh root: copy of the base root"; return; }
    fi
    need_update=1
  else
    if ! bootstrap "$R" "$WORK/mmdebstrap.log"; then
      "${fail_bootstrap[@]}"
      fail "fresh root: mmdebstrap bookworm (log: $WORK/mmdebstrap.log)" \
           "$(tail -n 15 "$WORK/mmdebstrap.log")"
      return
    fi
    pass "fresh root: mmdebstrap --variant=apt bookworm + g++, make, cmake, pkg-config in $((SECONDS - t)) s"
  fi

  local m
  for m in proc sys dev dev/pts; do
    mount --bind "/$m" "$R/$m" || { fail "fresh root: mount --bind /$m"; return; }
    MOUNTS+=("$R/$m")
  done
  cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
  if [ "$need_update" = 1 ]; then   # a cached root: today's package lists
    t=$SECONDS
    check "fresh root: apt-get update (the mirror)" \
      chroot "$R" apt-get -q -o DPkg::Lock::Timeout=60 update
    say "apt-get update took $((SECONDS - t)) s"
  fi
  mkdir -p "$R/opt/octet-test"
  cp "${DEBS[host]}"/*.deb "$MODEL" "$CONSUMER/app.c" "$CONSUMER/CMakeLists.txt" "$R/opt/octet-test/"

  t=$SECONDS
  check "fresh root: apt-get install ./liboctet0_*.deb ./liboctet-dev_*.deb ./octet-tools_*.deb" \
    chroot "$R" env DEBIAN_FRONTEND=noninteractive bash -c \
      'cd /opt/octet-test && apt-get -q -o DPkg::Lock::Timeout=60 -o Dpkg::Options::=--force-unsafe-io install -y --no-install-recommends ./*.deb'
  say "apt-get install took $((SECONDS - t)) s"
  in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash -c "cd /opt/octet-test && $1"; }
  local model=/opt/octet-test/$(basename "$MODEL")
  check "fresh root: ldd finds every library of octet, octet-convert, liboctet.so.0" \
    in_root '! ldd /usr/bin/octet /usr/bin/octet-convert /usr/lib/x86_64-linux-gnu/liboctet.so.0 | grep "not found"'
  check_output "fresh root: octet run MODEL --ids 1,2,3" "$CLI_OK" in_root "octet run $model --ids 1,2,3"
  check_output "fresh root: octet-convert --help" "octet-convert" in_root "octet-convert --help"
  check "fresh root: cmake consumer (find_package(octet), octet::octet + octet::octet_static) builds" \
    in_root 'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build'
  check_output "fresh root: octet::octet consumer runs" "$CONSUMER_OK" in_root "build/consumer_shared $model"
  check_output "fresh root: octet::octet_static consumer runs" "$CONSUMER_OK" in_root "build/consumer_static $model"
  check "fresh root: the octet::octet_static consumer does not need liboctet.so" \
    in_root '! readelf -dW build/consumer_static | grep -q liboctet'
  check "fresh root: cc app.c \$(pkg-config --cflags --libs octet)" \
    in_root 'cc -o pc_shared app.c $(pkg-config --cflags --libs octet)'
  check_output "fresh root: that consumer runs" "$CONSUMER_OK" in_root "./pc_shared $model"
  check "fresh root: cc app.c \$(pkg-config --cflags --libs octet-static)" \
    in_root 'cc -o pc_static app.c $(pkg-config --cflags --libs octet-static)'
  check_output "fresh root: that consumer runs" "$CONSUMER_OK" in_root "./pc_static $model"
  check_output "fresh root: pkg-config --static --libs octet lists the archive's libraries" \
    '-loctet .*-lstdc\+\+' in_root 'pkg-config --static --libs octet'
  cleanup_root
}

if [ "$NO_CHROOT" = 1 ]; then
  loud "OCTET_PACKAGES_NO_CHROOT=1: the fresh-root part (apt-get install of the amd64 .debs," \
       "consumer build on a bare Debian 12) was SKIPPED; every other check ran."
else
  say "a fresh Debian 12 root: apt-get installs the amd64 .debs"
  chroot_suite
fi

lap "fresh root"
say "done in $((SECONDS - T0)) s (${LAPS%, })"
if [ "$FAILED" -gt 0 ]; then
  printf 'failed:\n'; printf '  %s\n' "${FAILURES[@]}"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
