#!/usr/bin/env bash
# scripts/bench-tokenizers.sh: octet's tokenizer speed against Hugging Face tokenizers (npm
# `tokenizers`, Rust), side by side in one run, per tokenizer, on the six Austen novels.
#
# Reproduce (Debian 12; a scratch folder outside the repo for the npm package):
#   apt-get install -y --no-install-recommends r-cran-janeaustenr nodejs npm xz-utils
#   mkdir -p SCRATCH && (cd SCRATCH && npm install tokenizers@0.23.2)
#   cmake --preset host && cmake --build --preset host --target tokenizer_bench -j2   # octet's side
#   NODE_PATH=SCRATCH/node_modules scripts/bench-tokenizers.sh
#
# The workload: the novels as exported by models/austen/data.py (Rscript + janeaustenr), one
# paragraph per block, blocks separated by a blank line (~4 MB, ~11k paragraphs). Both sides encode
# every paragraph on its own, without special tokens, on one thread, and report
# bytes_per_s = UTF-8 bytes of all paragraphs / best wall time of ROUNDS rounds. Paragraphs rather
# than the whole text: that is the unit an app encodes, and it keeps the models without a
# pre-tokenizer (Llama 2, Mistral, Gemma: SentencePiece BPE over the whole input) from running BPE
# over one 4 MB "word", which measures nothing real. HF runs all paragraphs in one encodeBatch call
# (no per-call JS overhead) with RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false; its
# cpu_per_wall column (CPU time / wall time, ~1.00) shows it used one thread.
#
# Marian has no Hugging Face fast tokenizer: its row compares against the slow tokenizer's
# engine instead, Debian's python3-sentencepiece on source.spm plus the vocab.json mapping
# (tests/tokenizer/bench_marian_ref.py, in the HF column).
#
# octet's side: `tokenizer_bench TOKENIZER_DIR FILE` must read FILE the same way and print one JSON
# line {"bytes_per_s": ...}; it is looked up as $OCTET_BIN/tokenizer_bench. Without it the table
# has HF's column only and says octet's is missing. Both cpu/wall columns (CPU time / wall time of
# the best round) say how much of a core each side got: on a busy machine, compare runs whose two
# columns are alike.
#
# Environment:
#   OCTET_BIN  folder with tokenizer_bench (default build/host/bin)
#   ROUNDS     timed rounds per side and tokenizer, best kept (default 3)
#   ONLY       comma-separated tokenizer names (default: every archive in tests/tokenizer/data + austen)
#   WORK       scratch folder for the text and extracted tokenizers (default: a temp dir, removed)
# Time: ~2-4 min on an idle 2-core machine (gemma's 256k vocabulary takes the longest to load).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tokdir=$repo/tests/tokenizer
OCTET_BIN=${OCTET_BIN:-$repo/build/host/bin}
ROUNDS=${ROUNDS:-3}
export ROUNDS

command -v node > /dev/null || { echo "node is missing (apt-get install nodejs)" >&2; exit 2; }
node -e "require('tokenizers')" 2> /dev/null || {
  echo "npm tokenizers is not on NODE_PATH: (cd SCRATCH && npm install tokenizers@0.23.2), then" \
       "NODE_PATH=SCRATCH/node_modules $0" >&2; exit 2; }
command -v Rscript > /dev/null || { echo "Rscript is missing (apt-get install r-cran-janeaustenr)" >&2; exit 2; }

if [ -n "${WORK:-}" ]; then
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi

text=$WORK/austen-paragraphs.txt
if [ ! -s "$text" ]; then
  (cd "$repo/models/austen" && /usr/bin/python3 -c "
import sys, data
data.export_novels(sys.argv[1])
novels = data.load(sys.argv[1])
with open(sys.argv[2], 'w', encoding='utf-8') as f:
    f.write('\n\n'.join(t + '\n\n' + h for t, h in novels.values()))
" "$WORK/raw" "$text")
fi

names=$(node -p "Object.keys(require('$tokdir/data/sources.json')).join(' ')")" austen"
[ -n "${ONLY:-}" ] && names=$(echo "$ONLY" | tr ',' ' ')

octet=$OCTET_BIN/tokenizer_bench
have_octet=0
[ -x "$octet" ] && have_octet=1

printf "%s\n" "file: $(wc -c < "$text") bytes, $(grep -c . "$text") paragraphs; best of $ROUNDS rounds, one thread"
printf '%-16s %12s %10s %12s %12s %8s\n' tokenizer "HF MB/s" "HF cpu/wall" "octet MB/s" "oct cpu/wall" ratio
for name in $names; do
  if [ "$name" = austen ]; then
    dir=$repo/models/austen
  else
    dir=$WORK/tok/$name
    if [ ! -d "$dir" ]; then
      mkdir -p "$dir" && tar -xJf "$tokdir/data/$name.tar.xz" -C "$dir"
    fi
  fi
  if [ -f "$dir/tokenizer.json" ]; then
    hf=$(RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false node "$tokdir/bench_hf.js" "$dir" "$text")
  else
    # Marian: HF has only the slow tokenizer; its SentencePiece library is the reference.
    hf=$(/usr/bin/python3 "$tokdir/bench_marian_ref.py" "$dir" "$text")
  fi
  hf_bps=$(node -p "JSON.parse(process.argv[1]).bytes_per_s" "$hf")
  hf_cpu=$(node -p "JSON.parse(process.argv[1]).cpu_per_wall" "$hf")
  if [ $have_octet = 1 ]; then
    oc=$("$octet" "$dir" "$text" | tail -n 1)
    oc_bps=$(node -p "JSON.parse(process.argv[1]).bytes_per_s" "$oc")
    oc_cpu=$(node -p "JSON.parse(process.argv[1]).cpu_per_wall ?? NaN" "$oc")
    node -e '
      const [n, hf, cpu, oc, occpu] = process.argv.slice(1);
      const mb = (x) => (Number(x) / 1e6).toFixed(2);
      console.log(n.padEnd(16), mb(hf).padStart(12), Number(cpu).toFixed(2).padStart(10),
                  mb(oc).padStart(12), Number(occpu).toFixed(2).padStart(12),
                  (Number(oc) / Number(hf)).toFixed(2).padStart(7) + "x");
    ' "$name" "$hf_bps" "$hf_cpu" "$oc_bps" "$oc_cpu"
  else
    node -e '
      const [n, hf, cpu] = process.argv.slice(1);
      console.log(n.padEnd(16), (Number(hf) / 1e6).toFixed(2).padStart(12), Number(cpu).toFixed(2).padStart(10),
                  "missing".padStart(12), "-".padStart(12), "-".padStart(8));
    ' "$name" "$hf_bps" "$hf_cpu"
  fi
done
[ $have_octet = 1 ] || echo "octet's column is missing: no $octet (build the tokenizer_bench target)"
