#!/usr/bin/env bash
# scripts/fuzz.sh [RUNS]: a bounded libFuzzer run of the model loader
# (tests/fuzz/fuzz_loader.cc, ASan + UBSan), RUNS inputs (default 1000000).
#
# Configures build/host-fuzz with clang-14 (the host-fuzz preset when
# CMakePresets.json has it), builds the fuzzer and the seed generator, writes
# the seed models plus tests/fuzz/corpus/ into a temporary corpus, and runs.
# OCTET_FUZZ_SECONDS caps the run's time (default 900; scripts/test-all.sh sets 60).
# OCTET_FUZZ_ARGS adds libFuzzer flags (e.g. "-jobs=2 -workers=2").
#
# Exit status: non-zero when the build fails or the fuzzer finds a crash, a
# sanitizer report, a leak or a broken promise (loader_harness.h). The input
# is saved under build/host-fuzz/fuzz-artifacts/; once the loader is fixed,
# copy it into tests/fuzz/corpus/ so the replay test (format.fuzz_corpus_replay)
# keeps it fixed in every build.
#
# Needs clang-14 and libclang-rt-14-dev (scripts/setup.sh installs them).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
RUNS=${1:-1000000}
SECONDS_CAP=${OCTET_FUZZ_SECONDS:-900}
BUILD="$ROOT/build/host-fuzz"
JOBS=${OCTET_JOBS:-$(nproc 2>/dev/null || echo 2)}

for tool in clang-14 clang++-14 cmake ninja; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz.sh: $tool not found (scripts/setup.sh installs the toolchain)" >&2
    exit 2
  fi
done

if grep -q '"name": *"host-fuzz"' CMakePresets.json 2>/dev/null; then
  cmake --preset host-fuzz
else
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
        -DOCTET_BUILD_FUZZERS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$BUILD" -j "$JOBS" --target octet_fuzz_loader octet_fuzz_seeds

CORPUS=$(mktemp -d "${TMPDIR:-/tmp}/octet-fuzz-corpus.XXXXXX")
trap 'rm -rf "$CORPUS"' EXIT
"$BUILD/bin/octet_fuzz_seeds" "$CORPUS" >/dev/null
if compgen -G "tests/fuzz/corpus/*" >/dev/null; then cp tests/fuzz/corpus/* "$CORPUS"/; fi
ARTIFACTS="$BUILD/fuzz-artifacts"
mkdir -p "$ARTIFACTS"

echo "fuzz.sh: $RUNS runs (at most ${SECONDS_CAP}s) from $(ls "$CORPUS" | wc -l) inputs"
LOG="$BUILD/fuzz-loader.log"
status=0
# shellcheck disable=SC2086  # OCTET_FUZZ_ARGS is a list of flags
"$BUILD/bin/octet_fuzz_loader" -runs="$RUNS" -max_total_time="$SECONDS_CAP" -max_len=65536 \
    -use_value_profile=1 -timeout=10 -print_final_stats=1 \
    -dict="$ROOT/tests/fuzz/loader.dict" -artifact_prefix="$ARTIFACTS/" \
    ${OCTET_FUZZ_ARGS:-} "$CORPUS" >"$LOG" 2>&1 || status=$?

grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' \
    "$LOG" || true
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: FAILED (exit $status); the report:" >&2
  REPORT='ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|loaded, but|rejected with'
  grep -E -A40 "$REPORT" "$LOG" | head -80 >&2 || tail -40 "$LOG" >&2
  echo "fuzz.sh: full log $LOG; the input is in $ARTIFACTS/" >&2
  exit 1
fi
echo "fuzz.sh: no findings (log: $LOG)"
