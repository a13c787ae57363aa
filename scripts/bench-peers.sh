#!/usr/bin/env bash
# scripts/bench-peers.sh: octet's speed against other engines on the same workloads, in one run.
#
# What it does:
#   1. setup (idempotent, a few seconds when done): installs the peers outside the repo, into
#      $PEERS_DIR: Debian packages python3-torch python3-onnx python3-numpy libopenblas0-openmp
#      (+ gcc, cmake, g++, git, ninja-build, npm when missing), onnxruntime-node 1.30.0 from npm,
#      and llama.cpp's llama-bench, built once from the llama.cpp source bundle inside the npm
#      package node-llama-cpp 3.21.1 (`npm pack`; no other download), llama-embd and llama-logits
#      (scripts/peers/llama_embd.cpp, llama_logits.cpp, linked to that build's library: W4's and
#      W3's correctness checks).
#   2. workloads (once; again when the recipe in scripts/peers/ changes): random weights drawn once
#      by scripts/peers/make_workloads.py and written as Hugging Face checkpoints, from which come
#      the ONNX models, the Q8_0 GGUF, the torch models and octet's files (octet-convert, int8 and
#      --dtype fp32; converted again when octet-convert is newer than them).
#        W1  BERT-base shape (12 layers, d 768, 12 heads, FFN 3072, GELU, post-LN), seq 128, batch 1
#        W2  Llama shape (12 layers, d 768, 12 heads, FFN 2048 SwiGLU, RMSNorm, RoPE, vocab 32000):
#            prefill 128 tokens, then 128 decode steps; also prefill 512 and 2048 at 1 thread
#        W4  ModernBERT-base shape (22 layers, d 768, 12 heads, GeGLU 1152, LayerNorm without bias,
#            every 3rd layer global, the others a +-64 band, RoPE 160000 / 10000, vocab 50368):
#            one forward, ids -> last hidden state, at 512 and 8192 tokens; peak RSS of each engine
#        W3  (opt-in: WORKLOADS=w3) Qwen3.5-0.8B text shape (24 layers, d 1024, 3 Gated DeltaNet
#            layers then 1 gated full-attention layer, SwiGLU 3584, vocab 248320, tied head; 3 GB of
#            fp32 weights): prefill W3_SEQS tokens, then 64 single-token decode steps; octet int8
#            with --profile, octet fp32 (below 4096 tokens), torch fp32 (the repo's restatement,
#            tests/golden/ref_models/qwen3_5.py) and llama.cpp Q8_0 (its qwen35 GGUF, w3_gguf.py);
#            peak RSS. W3's files are made once and kept (make_workloads.py makes the missing ones
#            from w3-hf/; all again when w3-hf/ has another shape, or with W3_REMAKE=1).
#   3. checks: octet's W1 last hidden state (cosine) and W2 first 16 greedy tokens against torch
#      fp32; W4's last hidden state on 512 ids for octet int8/fp32 and llama.cpp's Q8_0 and f32
#      GGUFs, against torch fp32 and against how far deliberately wrong models land; W3's logits of
#      every position on 130 ids (octet int8/fp32 and their 16 greedy tokens; llama.cpp's f32 GGUF
#      in one batch and 100 in a batch + 30 single steps, its Q8_0 GGUF), the same way.
#   4. ROUNDS interleaved rounds, each at every thread count: the machine's int8 peak and memory
#      bandwidth (scripts/peers/int8_peak.c), octet int8 and fp32 (`octet bench --json`), ONNX
#      Runtime int8 (W1), PyTorch dynamic int8 and fp32 (W1, W2), PyTorch fp32 (W4, W3), llama.cpp
#      Q8_0 (W2, W4, W3; llama-bench, W4 with -embd 1 and the whole sequence in one ubatch, W3 as
#      -p SEQ -n 0 then -p 0 -n 64 -d SEQ).
#   5. one markdown table (medians over the rounds, ratios, the machine's limits), printed and
#      written next to the raw JSON lines: $PEERS_DIR/results-DATE.{jsonl,md}.
#
# Time on an idle 2-core machine: ~10 min a round at 2 thread counts for W1 + W2 (~20 min for
# ROUNDS=2; 42 min were seen on a machine busy with other builds); W4 adds ~35 min a round at 2
# thread counts (seen with one core busy elsewhere), 20 of them torch fp32's one forward at 8192
# tokens (dense attention, ~10 min) and 8 llama-bench's 3 at 8192 (~80 s each); plus once
# ~15 min of setup (apt ~1 min, the llama-bench build ~5 min with 2 jobs, workloads ~2 min,
# octet-convert ~1.5 min for W1 + W2 and ~3 min for W4's int8 tuning). W3 at 512 tokens, 1 thread:
# ~6 min a round (octet fp32's one prefill ~1 min, 3 min with its decode); at 8192 tokens far more
# (torch's and llama-bench's prefills, llama-bench's untimed 8192-token prompt before each decode
# run); once 10-25 min to make its files (checkpoint, GGUFs, torch's logits and 7 wrong models;
# 7 GB), and octet-convert's two files (4 GB).
# Optional: nothing in tests/ or scripts/test-all.sh calls it. Needs a Debian/Ubuntu x86-64 machine
# with apt and npm reachable for the setup; the numbers need an idle machine.
#
# Environment:
#   PEERS_DIR   where peers, models and results go (default ${XDG_CACHE_HOME:-$HOME/.cache}/octet-peers;
#               must be outside the repo; ~1.5 GiB, ~10 GiB more with W3)
#   OCTET_BIN   folder with octet and octet-convert (default build/host/bin)
#   OCTET_LABEL what the report calls that octet (default: `git describe --dirty` of this repo)
#   ROUNDS      interleaved rounds (default 2)
#   THREADS     thread counts (default "1 2"; commas or spaces)
#   ONLY        subset of: machine,octet,ort,torch,llamacpp (default all; e.g. ONLY=octet,ort)
#   WORKLOADS   subset of: w1,w2,w4,w3 (default w1,w2,w4; W3 only when named: WORKLOADS=w3)
#   W4_SEQS     W4's sequence lengths (default "512 8192")
#   W3_SEQS     W3's prompt lengths (default "512 8192")
#   W3_LAYERS, W3_VOCAB  a reduced W3 (default 24 layers, vocab 248320; e.g. 4 and 8192 to try the
#               pipeline in minutes): its files are made again when the shape changes
#   W3_REMAKE   1: make W3's files again (after a change to its recipe in scripts/peers/)
#   SETUP       0 skips step 1 (nothing is installed or built; missing peers are skipped)
#   DEBIAN_PY   python with Debian's torch/onnx/numpy (default /usr/bin/python3)
#   PEERS_TIMEOUT_S  longest one benchmark process may run (default 1200; it is then recorded as
#               failed: PyTorch at 2 threads can crawl when another process holds a core)
#   BUILD_JOBS  parallel jobs for the one-time llama-bench build (default: every core)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE="$ROOT/scripts/peers"
PEERS_DIR="$(realpath -m "${PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/octet-peers}")"
OCTET_BIN="${OCTET_BIN:-$ROOT/build/host/bin}"
PY="${DEBIAN_PY:-/usr/bin/python3}"
ROUNDS="${ROUNDS:-2}"
THREADS="$(echo "${THREADS:-1 2}" | tr ',' ' ')"
ONLY=",${ONLY:-machine,octet,ort,torch,llamacpp},"
WORKLOADS=",$(echo "${WORKLOADS:-w1,w2,w4}" | tr ' ' ','),"
W4_SEQS="$(echo "${W4_SEQS:-512 8192}" | tr ',' ' ')"
W3_SEQS="$(echo "${W3_SEQS:-512 8192}" | tr ',' ' ')"
W3_LAYERS="${W3_LAYERS:-24}"
W3_VOCAB="${W3_VOCAB:-248320}"
SETUP="${SETUP:-1}"
BUILD_JOBS="${BUILD_JOBS:-$(nproc)}"
ORT_VERSION=1.30.0
NODE_LLAMA_CPP_VERSION=3.21.1
MODELS="$PEERS_DIR/models"
export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ in the repo
LLAMA_BENCH="$PEERS_DIR/bin/llama-bench"
LLAMA_EMBD="$PEERS_DIR/bin/llama-embd"
LLAMA_LOGITS="$PEERS_DIR/bin/llama-logits"

has() { [[ "$ONLY" == *",$1,"* ]]; }
runs() { [[ "$WORKLOADS" == *",$1,"* ]]; }
say() { echo "== $*" >&2; }
case "$PEERS_DIR/" in
  "$ROOT"/*) echo "bench-peers: PEERS_DIR must be outside the repo ($PEERS_DIR)" >&2; exit 2 ;;
esac
mkdir -p "$PEERS_DIR"
for b in octet octet-convert; do
  [ -x "$OCTET_BIN/$b" ] || { echo "bench-peers: no $OCTET_BIN/$b (build octet first, or set OCTET_BIN)" >&2; exit 2; }
done
START=$(date +%s)

# ---- 1. setup ---------------------------------------------------------------------------------
apt_install() {  # the named Debian packages that are not installed yet
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  say "apt-get install ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
    --no-install-recommends "${missing[@]}" >/dev/null
}

setup() {
  apt_install python3-torch python3-onnx python3-numpy libopenblas0-openmp gcc libc6-dev
  if has ort || has llamacpp; then command -v npm >/dev/null || apt_install npm; fi
  if has ort && [ ! -f "$PEERS_DIR/ort/node_modules/onnxruntime-node/package.json" ]; then
    say "npm: onnxruntime-node@$ORT_VERSION"
    mkdir -p "$PEERS_DIR/ort"
    # Its install script would fetch GPU libraries from elsewhere: skip it (the CPU library is in
    # the npm package itself).
    (cd "$PEERS_DIR/ort" && { [ -f package.json ] || npm init -y >/dev/null; } &&
      ONNXRUNTIME_NODE_INSTALL=skip npm i -E --no-audit --no-fund "onnxruntime-node@$ORT_VERSION" >/dev/null)
  fi
  if has llamacpp && [ ! -x "$LLAMA_BENCH" ]; then
    apt_install cmake g++ git ninja-build
    say "llama-bench: llama.cpp source from npm node-llama-cpp@$NODE_LLAMA_CPP_VERSION, build with $BUILD_JOBS jobs"
    local dl="$PEERS_DIR/dl" src="$PEERS_DIR/llama.cpp-src" build="$PEERS_DIR/llama.cpp-build"
    mkdir -p "$dl" "$PEERS_DIR/bin"
    (cd "$dl" && npm pack -q "node-llama-cpp@$NODE_LLAMA_CPP_VERSION" >/dev/null &&
      tar xzf "node-llama-cpp-$NODE_LLAMA_CPP_VERSION.tgz" package/llama/gitRelease.bundle package/llama/llama.cpp.info.json)
    rm -rf "$src" && git clone -q "$dl/package/llama/gitRelease.bundle" "$src" 2>/dev/null
    cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
      -DLLAMA_BUILD_HTML=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF >"$build.log" 2>&1
    cmake --build "$build" --target llama-bench -j"$BUILD_JOBS" >>"$build.log" 2>&1 ||
      { echo "bench-peers: llama-bench build failed, see $build.log" >&2; exit 1; }
    cp "$build/bin/llama-bench" "$LLAMA_BENCH.tmp" && mv "$LLAMA_BENCH.tmp" "$LLAMA_BENCH"
  fi
  local lb="$PEERS_DIR/llama.cpp-build" ls="$PEERS_DIR/llama.cpp-src" tool
  for tool in embd logits; do  # llama-embd (W4's check), llama-logits (W3's)
    local exe="$PEERS_DIR/bin/llama-$tool" cpp="$HERE/llama_$tool.cpp"
    if has llamacpp && [ -f "$lb/src/libllama.a" ] && { [ ! -x "$exe" ] || [ "$cpp" -nt "$exe" ]; }; then
      say "llama-$tool: scripts/peers/llama_$tool.cpp on the llama-bench build's library"
      g++ -O2 -std=c++17 -o "$exe.tmp" "$cpp" -I"$ls/include" -I"$ls/ggml/include" \
        "$lb/src/libllama.a" "$lb/ggml/src/libggml.a" "$lb/ggml/src/libggml-cpu.a" "$lb/ggml/src/libggml-base.a" \
        -fopenmp -lpthread -ldl -lm && mv "$exe.tmp" "$exe"
    fi
  done
  if [ ! -x "$PEERS_DIR/bin/int8_peak" ] || [ "$HERE/int8_peak.c" -nt "$PEERS_DIR/bin/int8_peak" ]; then
    mkdir -p "$PEERS_DIR/bin" && cc -O2 -pthread -o "$PEERS_DIR/bin/int8_peak" "$HERE/int8_peak.c"
  fi
}
if [ "$SETUP" = 1 ]; then setup; fi
say "setup done ($(( $(date +%s) - START )) s)"

# ---- 2. workloads -----------------------------------------------------------------------------
# W1, W2, W4: one recipe, made again (W3's files kept) when a file of it changes.
RECIPE="$(cat "$HERE"/workloads.py "$HERE"/make_workloads.py "$HERE"/w1_onnx.py "$HERE"/w2_gguf.py "$HERE"/w4_gguf.py | sha256sum | cut -c1-16)"
if { runs w1 || runs w2 || runs w4; } && [ "$(cat "$MODELS/.recipe" 2>/dev/null)" != "$RECIPE" ]; then
  say "making W1, W2 and W4 in $MODELS"
  mkdir -p "$MODELS" && rm -rf "$MODELS"/w1-* "$MODELS"/w2-* "$MODELS"/w4-* "$MODELS/.recipe"
  "$PY" "$HERE/make_workloads.py" "$MODELS" --workloads w1,w2,w4
  echo "$RECIPE" >"$MODELS/.recipe"
fi
# W3: its files are kept (3 GB of weights, torch's logits of 7 wrong models): make_workloads.py
# makes the missing ones, and all of them when w3-hf/ has another shape than W3_LAYERS/W3_VOCAB.
if runs w3; then
  if [ "${W3_REMAKE:-0}" = 1 ]; then rm -rf "$MODELS"/w3-*; fi
  mkdir -p "$MODELS"
  "$PY" "$HERE/make_workloads.py" "$MODELS" --workloads w3 --w3-layers "$W3_LAYERS" --w3-vocab "$W3_VOCAB"
fi
if has octet; then
  for w in w1 w2 w4 w3; do runs "$w" || continue; for dt in int8 fp32; do
    f="$MODELS/$w-$dt.octet"
    if [ ! -s "$f" ] || [ "$OCTET_BIN/octet-convert" -nt "$f" ]; then
      say "octet-convert $w-hf --dtype $dt"
      "$OCTET_BIN/octet-convert" "$MODELS/$w-hf" -o "$f" --dtype "$dt" --quiet
    fi
  done; done
fi
say "workloads ready ($(( $(date +%s) - START )) s)"

# ---- 3.-5. checks, rounds, report ------------------------------------------------------------
STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$PEERS_DIR/results-$STAMP.jsonl"
REC() { "$PY" "$HERE/record.py" "$OUT" "$@" || true; }   # a failing peer is recorded, not fatal
OPENBLAS=""   # Debian's OpenBLAS 0.3.21 does not know recent CPUs and falls back to SSE3 kernels
if grep -qw avx512f /proc/cpuinfo; then OPENBLAS=SkylakeX; elif grep -qw avx2 /proc/cpuinfo; then OPENBLAS=Haswell; fi
W3_CONFIG=""; runs w3 && W3_CONFIG="$MODELS/w3-hf/config.json"
"$PY" - "$OUT" "${OCTET_LABEL:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}" "$W3_CONFIG" <<'EOF'
import json, os, sys, time
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
meta = {"engine": "meta", "date": time.strftime("%Y-%m-%d %H:%M"), "cpu": cpu, "cores": os.cpu_count(),
        "octet": sys.argv[2]}
if sys.argv[3]:  # W3's shape, for the report's floors
    c = json.load(open(sys.argv[3]))
    meta["w3"] = {"layers": c["num_hidden_layers"], "vocab": c["vocab_size"]}
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(meta) + "\n")
EOF
if has octet; then
  say "checks against torch fp32"
  "$PY" "$HERE/check_octet.py" "$OCTET_BIN/octet" "$MODELS" "${WORKLOADS//,/ }" >>"$OUT" || echo "bench-peers: octet checks failed" >&2
fi
if has llamacpp && runs w4 && [ -x "$LLAMA_EMBD" ]; then
  say "W4: llama.cpp's GGUFs against torch fp32"
  "$PY" "$HERE/check_llamacpp.py" w4 "$LLAMA_EMBD" "$MODELS" >>"$OUT" || echo "bench-peers: llama.cpp W4 check failed" >&2
fi
if has llamacpp && runs w3 && [ -x "$LLAMA_LOGITS" ]; then
  say "W3: llama.cpp's GGUFs against torch fp32"
  "$PY" "$HERE/check_llamacpp.py" w3 "$LLAMA_LOGITS" "$MODELS" >>"$OUT" || echo "bench-peers: llama.cpp W3 check failed" >&2
fi

for round in $(seq 1 "$ROUNDS"); do
  for t in $THREADS; do
    say "round $round/$ROUNDS, $t thread(s) ($(( $(date +%s) - START )) s)"
    L=(round="$round" threads="$t")
    if has machine; then
      REC "${L[@]}" engine=machine -- "$PEERS_DIR/bin/int8_peak" "$t"
    fi
    if has octet && { runs w1 || runs w2; }; then
      # int8 is the product; fp32 is the reference engine (slow): fewer runs, no long prefills.
      BENCH=("$OCTET_BIN/octet" bench --json --threads "$t")
      E=("${L[@]}" engine=octet-int8)
      runs w1 && REC "${E[@]}" workload=w1 -- "${BENCH[@]}" "$MODELS/w1-int8.octet" --seq 128 --runs 15
      if runs w2; then
        REC "${E[@]}" workload=w2 -- "${BENCH[@]}" "$MODELS/w2-int8.octet" --seq 128 --decode 128 --runs 5
        if [ "$t" = 1 ]; then
          REC "${E[@]}" workload=w2-pp512 -- "${BENCH[@]}" "$MODELS/w2-int8.octet" --seq 512 --decode 0 --runs 3
          REC "${E[@]}" workload=w2-pp2048 -- "${BENCH[@]}" "$MODELS/w2-int8.octet" --seq 2048 --decode 0 --runs 3
        fi
      fi
      E=("${L[@]}" engine=octet-fp32)
      runs w1 && REC "${E[@]}" workload=w1 -- "${BENCH[@]}" "$MODELS/w1-fp32.octet" --seq 128 --runs 3
      runs w2 && REC "${E[@]}" workload=w2 -- "${BENCH[@]}" "$MODELS/w2-fp32.octet" --seq 128 --decode 128 --runs 2
    fi
    if has ort && runs w1 && [ -d "$PEERS_DIR/ort/node_modules/onnxruntime-node" ]; then
      for form in mmi fused; do
        REC "${L[@]}" engine=ort-int8 workload=w1 -- env ORT_DIR="$PEERS_DIR/ort" \
          node "$HERE/bench_ort.mjs" "$MODELS/w1-int8-$form.onnx" "$t" 15
      done
    fi
    if has torch; then
      for mode in int8 fp32; do
        for w in w1 w2; do
          runs "$w" || continue
          REC "${L[@]}" engine="torch-$mode" workload="$w" -- env OMP_NUM_THREADS="$t" OPENBLAS_CORETYPE="$OPENBLAS" \
            "$PY" "$HERE/bench_torch.py" "$MODELS" "$w" "$mode" "$t"
        done
      done
    fi
    if has llamacpp && runs w2 && [ -x "$LLAMA_BENCH" ]; then
      REC "${L[@]}" engine=llamacpp-q8_0 workload=w2 -- "$PY" "$HERE/bench_llamabench.py" "$LLAMA_BENCH" "$MODELS/w2-q8_0.gguf" "$t" decode
      if [ "$t" = 1 ]; then
        REC "${L[@]}" engine=llamacpp-q8_0 workload=w2-long -- "$PY" "$HERE/bench_llamabench.py" "$LLAMA_BENCH" "$MODELS/w2-q8_0.gguf" 1 long 3
      fi
    fi
    # W4: the engines one after the other at each length, so that each ratio is measured close
    # in time; fewer runs at long lengths (torch fp32 needs minutes a forward at 8192).
    if runs w4; then
      for s in $W4_SEQS; do
        long=0; [ "$s" -ge 4096 ] && long=1
        W=("${L[@]}" workload="w4-$s")
        if has octet; then
          REC "${W[@]}" engine=octet-int8 -- "$OCTET_BIN/octet" bench --json --profile --threads "$t" \
            "$MODELS/w4-int8.octet" --seq "$s" --decode 0 --runs $(( long ? 2 : 5 ))
          REC "${W[@]}" engine=octet-fp32 -- "$OCTET_BIN/octet" bench --json --threads "$t" \
            "$MODELS/w4-fp32.octet" --seq "$s" --decode 0 --runs $(( long ? 1 : 3 ))
        fi
        if has torch; then
          REC "${W[@]}" engine=torch-fp32 -- env OMP_NUM_THREADS="$t" OPENBLAS_CORETYPE="$OPENBLAS" \
            "$PY" "$HERE/bench_torch.py" "$MODELS" "w4-$s" fp32 "$t"
        fi
        if has llamacpp && [ -x "$LLAMA_BENCH" ]; then
          REC "${W[@]}" engine=llamacpp-q8_0 -- "$PY" "$HERE/bench_llamabench.py" "$LLAMA_BENCH" \
            "$MODELS/w4-q8_0.gguf" "$t" embd $(( long ? 2 : 5 )) "$s"
        fi
      done
    fi
    # W3: prefill then 64 decode steps, the engines one after the other at each length. octet
    # fp32 (the reference engine: 3 min for a 512-token prefill and its decode) below 4096 tokens only.
    if runs w3; then
      for s in $W3_SEQS; do
        long=0; [ "$s" -ge 4096 ] && long=1
        W=("${L[@]}" workload="w3-$s")
        if has octet; then
          REC "${W[@]}" engine=octet-int8 -- "$OCTET_BIN/octet" bench --json --profile --threads "$t" \
            "$MODELS/w3-int8.octet" --seq "$s" --decode 64 --runs $(( long ? 2 : 3 ))
          if [ "$long" = 0 ]; then
            REC "${W[@]}" engine=octet-fp32 -- "$OCTET_BIN/octet" bench --json --threads "$t" \
              "$MODELS/w3-fp32.octet" --seq "$s" --decode 64 --runs 1
          fi
        fi
        if has torch; then
          REC "${W[@]}" engine=torch-fp32 -- env OMP_NUM_THREADS="$t" OPENBLAS_CORETYPE="$OPENBLAS" \
            "$PY" "$HERE/bench_torch.py" "$MODELS" "w3-$s" fp32 "$t"
        fi
        if has llamacpp && [ -x "$LLAMA_BENCH" ]; then
          REC "${W[@]}" engine=llamacpp-q8_0 -- "$PY" "$HERE/bench_llamabench.py" "$LLAMA_BENCH" \
            "$MODELS/w3-q8_0.gguf" "$t" w3 $(( long ? 2 : 3 )) "$s" 64
        fi
      done
    fi
  done
done

"$PY" "$HERE/report.py" "$OUT" "octet against the peers ($STAMP)" | tee "${OUT%.jsonl}.md"
say "done in $(( $(date +%s) - START )) s: ${OUT%.jsonl}.md, raw lines in $OUT"
