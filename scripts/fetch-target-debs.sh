#!/usr/bin/env bash
# usage: scripts/fetch-target-debs.sh <arm64|armhf> <outdir>
#
# Unpacks Debian 12's target-architecture libraries that octet builds against
# (XNNPACK, pthreadpool, cpuinfo, FlatBuffers headers, doctest) into a
# project-local mini sysroot, e.g. .deps/arm64, for the cross toolchain files
# in toolchains/.
#
# Why not `dpkg --add-architecture`: libxnnpack0/-dev and libpthreadpool0/-dev
# are not Multi-Arch: same, so installing the arm64 ones would remove the
# host's; and bookworm-security's armhf index fails apt's size check. So this
# script uses a private apt configuration (its own lists, cache and sources,
# an empty dpkg status) that leaves the system's apt and dpkg state untouched,
# downloads the .debs and extracts them with `dpkg-deb -x`.
#
# The Debian mirror is the machine's own, read at run time from
# /etc/apt/sources.list.d/*.sources or *.list or /etc/apt/sources.list
# (override with OCTET_DEBIAN_MIRROR=<uri>). Only the bookworm and
# bookworm-updates suites are used: the binaries must run on Raspberry Pi OS /
# Debian Bookworm, and their versions then match the host's flatc and compilers.
#
# Idempotent: a completed sysroot holds a stamp file listing the packages and
# versions it was made from; when the stamp is present and lists the same
# packages, the script does nothing (no network). OCTET_REFRESH_DEBS=1 forces
# a fresh download. An interrupted run leaves no half-filled <outdir>: the
# packages are unpacked into a staging directory that is renamed at the end.
set -euo pipefail

die() { echo "fetch-target-debs: error: $*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: $0 <arm64|armhf> <outdir>"
ARCH=$1
case "$ARCH" in
  arm64) TRIPLE=aarch64-linux-gnu ;;
  armhf) TRIPLE=arm-linux-gnueabihf ;;
  *) die "unknown architecture '$ARCH' (expected arm64 or armhf)" ;;
esac
OUT=$(realpath -m "$2")
SUITES="bookworm bookworm-updates"
PKGS=(libxnnpack0 libxnnpack-dev libpthreadpool0 libpthreadpool-dev
      libcpuinfo0 libcpuinfo-dev libflatbuffers-dev doctest-dev nlohmann-json3-dev libeigen3-dev)
STAMP_NAME=.octet-target-debs
STAMP="$OUT/$STAMP_NAME"

# --- already done? ---------------------------------------------------------
if [ "${OCTET_REFRESH_DEBS:-0}" != 1 ] && [ -f "$STAMP" ]; then
  want=$(printf '%s\n' "$ARCH" "${PKGS[@]}" | sort | tr '\n' ' ')
  have=$( { sed -n 's/^arch //p' "$STAMP"; sed -n 's/^package \([^ ]*\) .*/\1/p' "$STAMP"; } \
          | sort | tr '\n' ' ')
  if [ "$want" = "$have" ] && [ -e "$OUT/usr/lib/$TRIPLE/libXNNPACK.so" ] \
     && [ -e "$OUT/usr/include/flatbuffers/flatbuffers.h" ]; then
    echo "fetch-target-debs: $OUT is up to date ($ARCH: $(grep -c '^package ' "$STAMP") packages)"
    exit 0
  fi
  echo "fetch-target-debs: $OUT is incomplete or was made from other packages; fetching again"
fi

# A non-empty <outdir> that this script did not make is never deleted.
if [ -d "$OUT" ] && [ ! -f "$STAMP" ] && [ -n "$(ls -A "$OUT")" ]; then
  die "$OUT exists, is not empty and was not made by this script; remove it or choose another directory"
fi

for tool in apt-get dpkg-deb awk; do
  command -v "$tool" >/dev/null || die "'$tool' not found: this script needs a Debian system"
done
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$KEYRING" ] || die "$KEYRING missing: install debian-archive-keyring"

# --- the machine's Debian mirror ---------------------------------------------
# First a non-security URI of a deb822 .sources file whose Suites name bookworm,
# then a one-line 'deb' entry for bookworm. Options in [brackets] are skipped.
find_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk '
      function flush() {
        if (uris != "" && types ~ /(^| )deb( |$)/ && suites ~ /(^| )bookworm( |$)/ && enabled !~ /^no$/) {
          n = split(uris, u, " ")
          for (i = 1; i <= n; i++) if (u[i] !~ /security/) { print u[i]; found = 1; exit }
        }
        uris = ""; suites = ""; types = ""; enabled = ""
      }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]*#/ { next }
      tolower($1) == "uris:"    { sub(/^[^:]*:[ \t]*/, ""); uris = $0; next }
      tolower($1) == "suites:"  { sub(/^[^:]*:[ \t]*/, ""); suites = $0; next }
      tolower($1) == "types:"   { sub(/^[^:]*:[ \t]*/, ""); types = $0; next }
      tolower($1) == "enabled:" { sub(/^[^:]*:[ \t]*/, ""); enabled = tolower($0); next }
      END { if (!found) flush() }
    ' "$f" | head -n 1
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk '
      $1 != "deb" { next }
      {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        uri = $i; suite = $(i + 1)
        if (uri !~ /security/ && suite == "bookworm") { print uri; exit }
      }
    ' "$f"
  done
}
URI=${OCTET_DEBIAN_MIRROR:-$(find_mirror | head -n 1)}
[ -n "$URI" ] || die "no Debian bookworm mirror found in /etc/apt/sources.list{,.d/*}; set OCTET_DEBIAN_MIRROR=<uri>"

# --- download with a private apt configuration --------------------------------
WORK=$(mktemp -d)
rm -rf "$OUT".partial.*   # left by an interrupted run
STAGE="$OUT.partial.$$"
trap 'rm -rf "$WORK" "$STAGE"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/src" "$WORK/debs" "$STAGE"
printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
  "$URI" "$SUITES" "$KEYRING" > "$WORK/src/debian.sources"
APT=(-o Dir::State::Lists="$WORK/lists" -o Dir::Cache="$WORK/cache"
     -o Dir::Etc::SourceParts="$WORK/src" -o Dir::Etc::SourceList=/dev/null
     -o Dir::State::status=/dev/null -o APT::Sandbox::User="$(id -un)"
     -o APT::Architecture="$ARCH" -o APT::Architectures::="$ARCH")

echo "fetch-target-debs: $ARCH packages from $URI ($SUITES) -> $OUT"
apt-get "${APT[@]}" -qq update
( cd "$WORK/debs" && apt-get "${APT[@]}" -qq download "${PKGS[@]}" )

{
  echo "# made by scripts/fetch-target-debs.sh; delete this file to fetch again"
  echo "arch $ARCH"
  echo "suites $SUITES"
} > "$WORK/stamp"
for f in "$WORK"/debs/*.deb; do
  dpkg-deb -x "$f" "$STAGE"
  dpkg-deb -f "$f" Package Version | awk '/^Package:/ {p = $2} /^Version:/ {v = $2} END {print "package " p " " v}' \
    >> "$WORK/stamp"
done
[ "$(grep -c '^package ' "$WORK/stamp")" -eq "${#PKGS[@]}" ] \
  || die "expected ${#PKGS[@]} packages, got: $(sed -n 's/^package //p' "$WORK/stamp" | tr '\n' ',')"
[ -e "$STAGE/usr/lib/$TRIPLE/libXNNPACK.so" ] || die "libXNNPACK.so missing after unpacking"
cp "$WORK/stamp" "$STAGE/$STAMP_NAME"

# Replace <outdir> (only ever one this script made, or an empty one).
rm -rf "$OUT"
mkdir -p "$(dirname "$OUT")"
mv "$STAGE" "$OUT"
sed -n 's/^package /  /p' "$STAMP"
echo "fetch-target-debs: done ($(du -sh "$OUT" | cut -f1))"
