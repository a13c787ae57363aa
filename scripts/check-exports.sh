#!/usr/bin/env bash
# Checks that a shared library exports exactly the functions its public C
# headers declare: every `OCTET_API <type> name(` declaration of the headers
# is a defined dynamic symbol of the library (`nm -D --defined-only`), and the
# library defines no other. The list comes from the headers each time, so a
# function added to (or dropped from) either side without the other fails.
#
#   scripts/check-exports.sh LIBRARY HEADER...
#
# Exit status 0 when they agree; 1, with the differences, when not; 2 on a
# usage error. NM names the nm to run (default: nm). Used by ctest
# (abi.exports*) and scripts/test-packages.sh.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 LIBRARY HEADER..." >&2
  exit 2
fi
lib=$1
shift
for f in "$lib" "$@"; do
  [ -f "$f" ] || { echo "check-exports: no file $f" >&2; exit 2; }
done

# A declaration: a line (not a preprocessor line) with OCTET_API, then the
# return type, then the function's name before its '('.
declared=$(cat "$@" | grep -v '^[[:space:]]*#' | grep -E '(^|[^A-Za-z0-9_])OCTET_API[[:space:]]' |
           sed -nE 's/.*OCTET_API[^(]*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\(.*/\1/p' |
           sort -u)
exported=$("${NM:-nm}" -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u)

if [ -z "$declared" ]; then
  echo "check-exports: no OCTET_API declarations in $*" >&2
  exit 2
fi
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$extra" ] || [ -n "$missing" ]; then
  [ -n "$extra" ] && printf 'exported but not declared in the headers:\n%s\n' "$extra"
  [ -n "$missing" ] && printf 'declared in the headers but not exported:\n%s\n' "$missing"
  exit 1
fi
echo "check-exports: $(basename "$lib") exports exactly the $(wc -l <<<"$declared") functions the headers declare"
