#!/usr/bin/env bash
# scripts/fuzz.sh [RUNS]: bounded libFuzzer runs (ASan + UBSan) of every fuzz
# target, each at most RUNS inputs (default 1000000):
#   loader         tests/fuzz/fuzz_loader.cc: model files, seeded with tiny models
#                  and real tokenizers (cut), bound and used after each load
#   encode         tests/fuzz/fuzz_encode.cc: arbitrary text and id lists
#                  through real tokenizers (encode, decode, stream decode)
#   chat_template  tests/fuzz/fuzz_chat_template.cc: template source + messages
#   regex          tests/fuzz/fuzz_regex.cc: the tokenizers' regex engine (pattern, a 0
#                  byte, text), seeded with real pre-tokenizer patterns
#
# Configures build/host-fuzz with clang-14 (the host-fuzz preset when
# CMakePresets.json has it), builds the fuzzers and the seed generator, writes
# each target's seeds plus tests/fuzz/corpus/ (the loader's) into a temporary
# corpus, and runs the targets one after another.
#
# Time: OCTET_FUZZ_SECONDS caps the loader's run (default 900;
# scripts/test-all.sh sets 60) and the others' too, but those stop at 60 s
# unless their own budget says otherwise: OCTET_FUZZ_SECONDS_LOADER,
# OCTET_FUZZ_SECONDS_ENCODE, OCTET_FUZZ_SECONDS_CHAT_TEMPLATE, OCTET_FUZZ_SECONDS_REGEX (30).
# OCTET_FUZZ_TARGETS picks targets (default "loader encode chat_template regex").
# OCTET_FUZZ_ARGS adds libFuzzer flags (e.g. "-jobs=2 -workers=2").
#
# Exit status: non-zero when the build fails or any target finds a crash, a
# sanitizer report, a leak or a broken promise (loader_harness.h,
# fuzz_encode.cc). The input is saved under build/host-fuzz/fuzz-artifacts/
# (named <target>-crash-...); once fixed, keep it fixed: loader inputs go into
# tests/fuzz/corpus/ (the replay test format.fuzz_corpus_replay runs them in
# every build), other findings get a regression test in the normal suites.
#
# Needs clang-14 and libclang-rt-14-dev (scripts/setup.sh installs them).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
RUNS=${1:-1000000}
BUILD="$ROOT/build/host-fuzz"
JOBS=${OCTET_JOBS:-$(nproc 2>/dev/null || echo 2)}
TARGETS=${OCTET_FUZZ_TARGETS:-loader encode chat_template regex}
CAP=${OCTET_FUZZ_SECONDS:-900}
SMALL_CAP=$(( CAP < 60 ? CAP : 60 ))

for tool in clang-14 clang++-14 cmake ninja; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz.sh: $tool not found (scripts/setup.sh installs the toolchain)" >&2
    exit 2
  fi
done

build_targets=(octet_fuzz_seeds)
for t in $TARGETS; do
  case $t in
    loader|encode|chat_template|regex) build_targets+=("octet_fuzz_$t") ;;
    *) echo "fuzz.sh: unknown target '$t' (loader, encode, chat_template, regex)" >&2; exit 2 ;;
  esac
done

if grep -q '"name": *"host-fuzz"' CMakePresets.json 2>/dev/null; then
  cmake --preset host-fuzz
else
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
        -DOCTET_BUILD_FUZZERS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$BUILD" -j "$JOBS" --target "${build_targets[@]}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/octet-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ARTIFACTS="$BUILD/fuzz-artifacts"
mkdir -p "$ARTIFACTS"

# Fills $WORK/<target> with the target's seeds.
seed() {
  local dir="$WORK/$1"
  mkdir -p "$dir"
  case $1 in
    loader)
      "$BUILD/bin/octet_fuzz_seeds" "$dir" >/dev/null
      if compgen -G "tests/fuzz/corpus/*" >/dev/null; then cp tests/fuzz/corpus/* "$dir"/; fi ;;
    encode)
      "$BUILD/bin/octet_fuzz_seeds" --encode "$dir" >/dev/null ;;
    chat_template)
      # Each real template with the messages of one test case, NUL-separated.
      local tmpl
      for tmpl in tests/text/chat_templates/*.jinja; do
        { cat "$tmpl"; printf '\0You are terse.\0Hi there!\0Hello. How can I help?\0Name 3 colours.'; } \
          >"$dir/$(basename "$tmpl" .jinja)"
        { cat "$tmpl"; printf '\0\0'; } >"$dir/$(basename "$tmpl" .jinja)_empty"
      done ;;
    regex)
      # GPT-2's and Llama 3's split patterns and a Replace pattern, each with a text.
      local text="Hello world's 12345 CAFÉ  déjà vu\r\n\t你好 🙂\u00a0end"
      printf '%s\0%b' "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+" \
        "$text" >"$dir/gpt2"
      printf '%s\0%b' "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" \
        "$text" >"$dir/llama3"
      printf '%s\0%b' " {2,}" "$text" >"$dir/replace" ;;
  esac
}

# run TARGET SECONDS [libFuzzer flags...]: one bounded run; 0 when clean.
run() {
  local target=$1 seconds=$2 status=0
  shift 2
  local log="$BUILD/fuzz-$target.log"
  seed "$target"
  echo "fuzz.sh: $target: $RUNS runs (at most ${seconds}s) from $(ls "$WORK/$target" | wc -l) inputs"
  # shellcheck disable=SC2086  # OCTET_FUZZ_ARGS is a list of flags
  "$BUILD/bin/octet_fuzz_$target" -runs="$RUNS" -max_total_time="$seconds" \
      -use_value_profile=1 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$ARTIFACTS/$target-" "$@" \
      ${OCTET_FUZZ_ARGS:-} "$WORK/$target" >"$log" 2>&1 || status=$?
  grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' \
      "$log" | sed "s/^/  /" || true
  if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: $target FAILED (exit $status); the report:" >&2
    local report='ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|loaded, but|rejected with|^tokenizer '
    grep -E -A40 "$report" "$log" | head -80 >&2 || tail -40 "$log" >&2
    grep -E 'Test unit written to' "$log" >&2 || true
    echo "fuzz.sh: full log $log; the input is in $ARTIFACTS/ ($target-*)" >&2
    return 1
  fi
  echo "fuzz.sh: $target: no findings (log: $log)"
}

failed=()
for t in $TARGETS; do
  case $t in
    loader)
      run loader "${OCTET_FUZZ_SECONDS_LOADER:-$CAP}" -max_len=65536 \
          -dict="$ROOT/tests/fuzz/loader.dict" || failed+=(loader) ;;
    encode)
      # 2 bytes of header + fuzz_encode.cc's kMaxText.
      run encode "${OCTET_FUZZ_SECONDS_ENCODE:-$SMALL_CAP}" -max_len=4098 || failed+=(encode) ;;
    chat_template)
      run chat_template "${OCTET_FUZZ_SECONDS_CHAT_TEMPLATE:-$SMALL_CAP}" -max_len=16384 \
          || failed+=(chat_template) ;;
    regex)
      run regex "${OCTET_FUZZ_SECONDS_REGEX:-$(( SMALL_CAP < 30 ? SMALL_CAP : 30 ))}" -max_len=4096 \
          || failed+=(regex) ;;
  esac
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: no findings"
