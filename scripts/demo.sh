#!/usr/bin/env bash
# The demo: installs what is missing, builds the `host` preset, then inspects,
# runs and benchmarks the bundled models (models/README.md says what they are):
# the layer-free demo decoder, and the trained Austen decoder converted to int8.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset host
cmake --build --preset host

bin=build/host/bin
model=models/demo/tiny-decoder.octet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== octet inspect $model"
"$bin/octet" inspect "$model"
echo
echo "== octet run $model --ids 1,5,9 --ids 3,4 --dump logits.npy"
"$bin/octet" run "$model" --ids 1,5,9 --ids 3,4 --dump "$out/logits.npy"
echo "wrote $(stat -c %s "$out/logits.npy") bytes of float32 logits"
echo
echo "== octet bench $model --seq 128 --json"
"$bin/octet" bench "$model" --seq 128 --decode 0 --json
echo

# The trained model (models/austen): converted to int8 with its quantization
# report, then a greedy continuation of the first 32 held-out tokens. Ids for
# now: text in and out comes with the tokenizers.
austen=models/austen
echo "== octet-convert $austen -o austen.octet --calibration $austen/calibration_ids.txt"
"$bin/octet-convert" "$austen" -o "$out/austen.octet" --calibration "$austen/calibration_ids.txt"
prompt=$(head -n 1 "$austen/heldout_ids.txt" | tr ' ' '\n' | head -n 32 | paste -sd, -)
echo
echo "== octet run austen.octet --ids <32 held-out ids> --generate 32 --temperature 0"
"$bin/octet" run "$out/austen.octet" --ids "$prompt" --generate 32 --temperature 0
echo
echo "== octet bench austen.octet --seq 128 --decode 64 --json"
"$bin/octet" bench "$out/austen.octet" --seq 128 --decode 64 --json
