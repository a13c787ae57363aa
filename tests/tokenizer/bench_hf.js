// Hugging Face tokenizers' (npm `tokenizers`, Rust) encode speed on one text, one thread.
//
// FILE holds paragraphs separated by one blank line ("\n\n"); each paragraph is encoded on its own,
// without special tokens, as an app hands a tokenizer its text. All paragraphs go in one
// encodeBatch call, so the time is Rust's, not one N-API call and promise per paragraph; with
// RAYON_NUM_THREADS=1 and TOKENIZERS_PARALLELISM=false that batch runs on one thread, which the
// printed cpu_per_wall (CPU time / wall time of the timed call, ~1.0 for one thread) shows.
// bytes_per_s = UTF-8 bytes of all paragraphs / the best wall time of ROUNDS rounds (default 3).
//
// usage: NODE_PATH=SCRATCH/node_modules RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false \
//          node tests/tokenizer/bench_hf.js TOKENIZER_DIR_OR_JSON FILE
// prints one JSON line: {"bytes_per_s", "bytes", "paragraphs", "tokens", "best_s", "cpu_per_wall", ...}
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require('tokenizers');

async function main() {
  const [where, file] = process.argv.slice(2);
  if (!where || !file) {
    console.error('usage: node bench_hf.js TOKENIZER_DIR_OR_JSON FILE');
    process.exit(2);
  }
  if (process.env.RAYON_NUM_THREADS !== '1' || process.env.TOKENIZERS_PARALLELISM !== 'false') {
    console.error('set RAYON_NUM_THREADS=1 and TOKENIZERS_PARALLELISM=false: the comparison is one thread');
    process.exit(2);
  }
  const json = fs.statSync(where).isDirectory() ? path.join(where, 'tokenizer.json') : where;
  const tok = tk.Tokenizer.fromFile(json);
  const paragraphs = fs.readFileSync(file, 'utf8').split('\n\n').filter((p) => p.length > 0);
  const bytes = paragraphs.reduce((n, p) => n + Buffer.byteLength(p, 'utf8'), 0);
  const rounds = Number(process.env.ROUNDS || 3);

  // One untimed round warms the model's caches the way a long-running app has them warm.
  await tok.encodeBatch(paragraphs.slice(0, 64), { addSpecialTokens: false });
  let best = Infinity;
  let cpuPerWall = 0;
  let tokens = 0;
  for (let r = 0; r < rounds; r++) {
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const out = await tok.encodeBatch(paragraphs, { addSpecialTokens: false });
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    tokens = out.reduce((n, e) => n + e.getLength(), 0);
    if (wall < best) {
      best = wall;
      cpuPerWall = (cpu.user + cpu.system) / 1e6 / wall;
    }
  }
  console.log(JSON.stringify({
    bytes_per_s: bytes / best, bytes, paragraphs: paragraphs.length, tokens, best_s: best, rounds,
    cpu_per_wall: Number(cpuPerWall.toFixed(3)), tokenizers: require('tokenizers/package.json').version,
  }));
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
