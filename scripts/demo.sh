#!/usr/bin/env bash
# The demo: installs what the host build needs (scripts/setup.sh --demo), builds the
# library and the two tools (the `demo` preset: no tests), converts the trained Austen
# model (models/austen: a small Llama trained here on Jane Austen's novels) to int8 and
# lets it write text from a prompt, printing tokens/s and memory.
#
#   scripts/demo.sh ["PROMPT"]
set -euo pipefail
cd "$(dirname "$0")/.."

prompt=${1:-"It is a truth universally acknowledged, that"}

bash scripts/setup.sh --demo
cmake --preset demo >/dev/null
cmake --build --preset demo

bin=build/demo/bin
out=build/demo/models
mkdir -p "$out"

echo
echo "== octet-convert models/austen -o $out/austen.octet"
"$bin/octet-convert" models/austen -o "$out/austen.octet" \
  --calibration models/austen/calibration_ids.txt --quiet
echo
echo "== octet run $out/austen.octet --prompt \"$prompt\" --generate 120 --temperature 0.8 --top-p 0.95 --seed 7"
"$bin/octet" run "$out/austen.octet" --prompt "$prompt" --generate 120 \
  --temperature 0.8 --top-p 0.95 --seed 7
