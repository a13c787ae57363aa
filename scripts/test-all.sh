#!/usr/bin/env bash
# scripts/test-all.sh [suite ...]: the project's whole test run (README, CI).
#
# Suites, in order (all of them when no argument is given):
#   host, host-asan, host-tsan, rpi-aarch64, rpi-armhf
#       cmake --preset S && cmake --build --preset S && ctest --preset S
#       (the rpi-* tests run under qemu-user, -cpu max; tests/kernels adds
#       runs under other qemu CPU models for the run-time kernel choice; after a
#       passing host suite, they convert checkpoints with its octet-convert;
#       host-tsan builds and runs only the threaded suite, tests/engine/threads_test.cc)
#   packages
#       scripts/test-packages.sh: the .debs (cpack) of host, rpi-aarch64 and
#       rpi-armhf, checked (architecture, NEEDED vs Depends, exports), their CLI
#       and a consumer program run (qemu-user for arm), the amd64 ones installed
#       with apt into a fresh Debian 12 root (needs root; OCTET_PACKAGES_NO_CHROOT=1
#       skips only that part), and the `cmake --install` tree used by a consumer
#       project through find_package(octet) and pkg-config
#   android-check
#       scripts/android-compile-check.sh (kernels compiled for the Android triples)
#   fuzz
#       scripts/fuzz.sh: a bounded libFuzzer run of the loader
#       (OCTET_FUZZ_SECONDS, default 20 per target, is exported for it)
#
# It first runs scripts/setup.sh (the Debian packages and the .deps/ target libraries;
# idempotent, about a second when everything is present), so on a fresh machine this
# one command is enough. A failing setup fails the run before any suite.
# Jobs: OCTET_JOBS (default: every core) for the build, CTEST_PARALLEL_LEVEL for ctest.
# Logs: build/test-all/<suite>.log. Prints a summary table at the end; the exit
# status is non-zero when anything failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$(pwd)

# A missing helper (scripts/android-compile-check.sh, scripts/fuzz.sh) fails the
# run; OCTET_REQUIRE_HELPERS=0 only reports it (loudly).
REQUIRE_HELPERS=${OCTET_REQUIRE_HELPERS:-1}

JOBS=${OCTET_JOBS:-$(nproc 2>/dev/null || echo 2)}
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-$JOBS}
export OCTET_FUZZ_SECONDS=${OCTET_FUZZ_SECONDS:-20}
LOGS="$ROOT/build/test-all"
mkdir -p "$LOGS"

ALL_SUITES=(host host-asan host-tsan rpi-aarch64 rpi-armhf packages android-check fuzz)
if [ $# -gt 0 ]; then SUITES=("$@"); else SUITES=("${ALL_SUITES[@]}"); fi
for s in "${SUITES[@]}"; do
  case " ${ALL_SUITES[*]} " in
    *" $s "*) ;;
    *) echo "test-all: unknown suite '$s' (known: ${ALL_SUITES[*]})" >&2; exit 2 ;;
  esac
done

# Summary rows: name|status|passed|failed|seconds
ROWS=()
FAILED=0

banner() { printf '\n==== %s ====\n' "$*"; }

# ctest_counts LOG -> "passed failed" from ctest's last summary line
# ("100% tests passed, 0 tests failed out of 12"); "0 0" when there is none.
ctest_counts() {
  local line total failed
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -n 1)
  if [ -z "$line" ]; then echo "0 0"; return; fi
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$line")
  total=$(sed -E 's/.*failed out of ([0-9]+).*/\1/' <<<"$line")
  echo "$((total - failed)) $failed"
}

add_row() {  # name status passed failed seconds
  ROWS+=("$1|$2|$3|$4|$5")
  if [ "$2" = FAIL ]; then FAILED=1; fi
}

# The cross presets' tests convert checkpoints with the host preset's converter when this run
# built and tested it (OCTET_HOST_CONVERT, tests/CMakeLists.txt), else under qemu.
HOST_CONVERT=""

run_preset() {
  local p=$1 log="$LOGS/$1.log" t0=$SECONDS status=PASS
  local configure_args=()
  case "$p" in
    rpi-*) configure_args=("-DOCTET_HOST_CONVERT=$HOST_CONVERT") ;;
  esac
  banner "$p: configure, build, test"
  {
    cmake --preset "$p" "${configure_args[@]}" &&
    cmake --build --preset "$p" -j "$JOBS" &&
    ctest --preset "$p"
  } 2>&1 | tee "$log" || status=FAIL
  read -r passed failed < <(ctest_counts "$log")
  add_row "$p" "$status" "$passed" "$failed" $((SECONDS - t0))
  if [ "$p" = host ] && [ "$status" = PASS ] && [ -x "$ROOT/build/host/bin/octet-convert" ]; then
    HOST_CONVERT="$ROOT/build/host/bin/octet-convert"
  fi
}

run_helper() {  # suite-name script [args...]
  local name=$1 script=$2 log="$LOGS/$1.log" t0=$SECONDS status=PASS
  shift 2
  banner "$name: $script${*:+ $*}"
  if [ ! -f "$ROOT/$script" ]; then
    printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' | tee "$log"
    printf '!!! %s is MISSING: the %s suite did not run.\n' "$script" "$name" | tee -a "$log"
    printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n' | tee -a "$log"
    if [ "$REQUIRE_HELPERS" = 1 ]; then status=FAIL; else status=MISSING; fi
    add_row "$name" "$status" - - 0
    return
  fi
  bash "$ROOT/$script" "$@" 2>&1 | tee "$log" || status=FAIL
  # a helper that ends with "N passed, N failed" gives its counts
  local counts
  counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
  if [ -n "$counts" ]; then
    add_row "$name" "$status" "${counts%% *}" "$(sed -E 's/.*, ([0-9]+) failed/\1/' <<<"$counts")" $((SECONDS - t0))
  else
    add_row "$name" "$status" - - $((SECONDS - t0))
  fi
}

T0=$SECONDS
banner "setup: scripts/setup.sh"
if ! bash "$ROOT/scripts/setup.sh" 2>&1 | tee "$LOGS/setup.log"; then
  echo "test-all: scripts/setup.sh failed (log: build/test-all/setup.log); no suite ran" >&2
  exit 1
fi
for s in "${SUITES[@]}"; do
  case "$s" in
    packages) run_helper packages scripts/test-packages.sh ;;
    android-check) run_helper android-check scripts/android-compile-check.sh ;;
    fuzz) run_helper fuzz scripts/fuzz.sh ;;
    *) run_preset "$s" ;;
  esac
done

banner "summary"
printf '%-26s %-8s %7s %7s %8s\n' suite result passed failed time
printf '%-26s %-8s %7s %7s %8s\n' -------------------------- -------- ------- ------- --------
for row in "${ROWS[@]}"; do
  IFS='|' read -r name status passed failed secs <<<"$row"
  printf '%-26s %-8s %7s %7s %7ss\n' "$name" "$status" "$passed" "$failed" "$secs"
done
printf '%-26s %-8s %7s %7s %7ss\n' total "$([ $FAILED = 0 ] && echo PASS || echo FAIL)" "" "" $((SECONDS - T0))
for row in "${ROWS[@]}"; do
  case "$row" in
    *"|MISSING|"*) echo "NOTE: a helper script is missing (see above); OCTET_REQUIRE_HELPERS=0 lets that pass."; break ;;
  esac
done
echo "logs: build/test-all/"
exit "$FAILED"
