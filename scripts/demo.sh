#!/usr/bin/env bash
# The demo: installs what is missing, builds the `host` preset, then inspects,
# runs and benchmarks the bundled model (models/README.md says what it is).
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
