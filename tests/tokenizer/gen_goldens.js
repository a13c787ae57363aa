// Writes goldens/<name>.jsonl: Hugging Face tokenizers' ids and decodes of every corpus line, for
// every tokenizer in data/ and the models/austen tokenizer. See README.md ("Goldens") for the format
// and how to install the one dependency (npm tokenizers@0.23.2, outside the repository).
//
// usage: NODE_PATH=SCRATCH/node_modules node tests/tokenizer/gen_goldens.js [NAME...]
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { execFileSync } = require('child_process');
const tk = require('tokenizers');

const WANT_TOKENIZERS = '0.23.2';
const here = __dirname;
const repo = path.resolve(here, '..', '..');
const dataDir = path.join(here, 'data');
const outDir = path.join(here, 'goldens');

const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');

function tokenizersVersion() {
  const v = require('tokenizers/package.json').version;
  if (v !== WANT_TOKENIZERS) throw new Error(`npm tokenizers ${v} found; the goldens are made with ${WANT_TOKENIZERS}`);
  return v;
}

// name -> { dir with tokenizer.json, provenance of its files }
function tokenizerSources(tmp) {
  const sources = JSON.parse(fs.readFileSync(path.join(dataDir, 'sources.json'), 'utf8'));
  const out = {};
  for (const name of Object.keys(sources)) {
    // Marian has no tokenizer.json (HF has only the slow tokenizer): gen_marian_goldens.py.
    if (!('tokenizer.json' in sources[name].files)) continue;
    const archive = path.join(dataDir, `${name}.tar.xz`);
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    execFileSync('tar', ['-xJf', archive, '-C', dir]);
    for (const [file, want] of Object.entries(sources[name].files)) {
      const got = sha256(fs.readFileSync(path.join(dir, file)));
      if (got !== want) throw new Error(`${name}/${file}: sha256 ${got}, sources.json says ${want}`);
    }
    out[name] = { dir, source: { ...sources[name], archive: `tests/tokenizer/data/${name}.tar.xz`,
                                 archive_sha256: sha256(fs.readFileSync(archive)) } };
  }
  const austen = path.join(repo, 'models', 'austen');
  out.austen = { dir: austen, source: {
    model: 'the Austen demo model', kind: 'BPE, byte-level, trained by models/austen/bpe.py',
    source: 'models/austen/tokenizer.json (this repository)',
    files: { 'tokenizer.json': sha256(fs.readFileSync(path.join(austen, 'tokenizer.json'))) } } };
  return out;
}

// Added tokens: [{id, content, special}] from the tokenizer.json.
function addedTokens(dir) {
  const j = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
  return { added: j.added_tokens.map((t) => ({ id: t.id, content: t.content, special: t.special })),
           byteFallback: j.model.byte_fallback === true };
}

// Ids whose decoding is tricky: special and added tokens mid-sequence, bytes of one character
// split over tokens, the first and last ids of the vocabulary, and one id past its end.
async function decodeCases(tok, dir) {
  const { added, byteFallback } = addedTokens(dir);
  const vocab = tok.getVocab(true);
  const size = tok.getVocabSize(true);
  const plain = async (s) => (await tok.encode(s, null, { addSpecialTokens: false })).getIds();
  const hello = await plain('Hello world');
  const tail = await plain(' and more text.');
  const cases = [];
  for (const t of added) {
    cases.push({ case: `${t.special ? 'special' : 'added'} token ${t.content} alone`, ids: [t.id] });
    cases.push({ case: `${t.special ? 'special' : 'added'} token ${t.content} mid-sequence`,
                 ids: [...hello, t.id, ...tail] });
  }
  if (added.length > 1) {
    cases.push({ case: 'all added tokens in a row', ids: added.map((t) => t.id) });
  }
  // U+4F60 is E4 BD A0; U+1F600 is F0 9F 98 80.
  const pieces = byteFallback
    ? (b) => vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`]
    : (b) => vocab[byteLevelChar(b)];
  const bytes = (list) => list.map(pieces);
  const ok = (ids) => ids.every((i) => Number.isInteger(i));
  const byteCases = [
    ['a character whole from byte tokens', [0xe4, 0xbd, 0xa0]],
    ['a character cut after 2 of 3 bytes', [0xe4, 0xbd]],
    ['an emoji cut after 3 of 4 bytes', [0xf0, 0x9f, 0x98]],
    ['a lone continuation byte', [0x80]],
    ['an invalid byte', [0xff]],
  ];
  for (const [what, b] of byteCases) {
    const ids = bytes(b);
    if (!ok(ids)) continue;
    cases.push({ case: `${what} (byte tokens)`, ids });
    cases.push({ case: `${what} (byte tokens) between words`, ids: [...hello, ...ids, ...tail] });
  }
  const first = [...Array(Math.min(64, size)).keys()];
  const last = [...Array(Math.min(64, size)).keys()].map((i) => size - 64 + i).filter((i) => i >= 0);
  cases.push({ case: 'the first 64 ids', ids: first });
  cases.push({ case: 'the last 64 ids', ids: last });
  cases.push({ case: 'an id past the end of the vocabulary (HF skips it)', ids: [...hello, size + 7, ...tail],
               out_of_range: true });
  cases.push({ case: 'no ids', ids: [] });
  for (const c of cases) {
    c.decoded = await tok.decode(c.ids, true);
    c.decoded_keep_special = await tok.decode(c.ids, false);
  }
  return cases;
}

// GPT-2's byte-to-unicode table: printable Latin-1 bytes map to themselves, the rest to U+0100...
function byteLevelChar(b) {
  const keep = (x) => (x >= 0x21 && x <= 0x7e) || (x >= 0xa1 && x <= 0xac) || (x >= 0xae && x <= 0xff);
  if (keep(b)) return String.fromCodePoint(b);
  let n = 0;
  for (let x = 0; x < b; x++) if (!keep(x)) n++;
  return String.fromCodePoint(0x100 + n);
}

// The tokenizer with HF's split_special_tokens (Rust's encode_special_tokens, which the node binding
// does not expose): special added tokens are not split out of the text. Rust skips a special match
// and resumes after it; dropping the special tokens from added_tokens gives the same result unless
// a non-special added token could start inside a special one, which is checked here. The
// remaining added tokens may get other ids in that tokenizer (their ids follow the vocabulary
// there), so ids go back through their token strings (idsIn).
function splitSpecialTokenizer(dir) {
  const j = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
  const special = j.added_tokens.filter((t) => t.special).map((t) => t.content);
  const other = j.added_tokens.filter((t) => !t.special).map((t) => t.content);
  for (const s of special) {
    for (const t of other) {
      for (let i = 0; i < s.length; i++) {
        const rest = s.slice(i);
        if ((rest.startsWith(t) && (i > 0 || t.length < s.length)) || (i > 0 && t.startsWith(rest))) {
          throw new Error(`added token ${t} can start inside special token ${s}: ids_split_special would not be HF's`);
        }
      }
    }
  }
  j.added_tokens = j.added_tokens.filter((t) => !t.special);
  return tk.Tokenizer.fromString(JSON.stringify(j));
}

// `plain`'s ids as `tok`'s: the same token strings.
function idsIn(tok, plain, ids) {
  return ids.map((id) => {
    const t = plain.idToToken(id);
    const back = t === null || t === undefined ? undefined : tok.tokenToId(t);
    if (back === null || back === undefined) throw new Error(`id ${id} (${t}) has no id in the tokenizer`);
    return back;
  });
}

async function goldens(name, src, texts, meta) {
  const tok = tk.Tokenizer.fromFile(path.join(src.dir, 'tokenizer.json'));
  const plain = splitSpecialTokenizer(src.dir);
  const lines = [JSON.stringify({ provenance: { ...meta, tokenizer: name, ...src.source } })];
  for (const text of texts) {
    const ids = (await tok.encode(text, null, { addSpecialTokens: true })).getIds();
    const idsNoSpecial = (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
    const idsSplitSpecial = idsIn(tok, plain, (await plain.encode(text, null, { addSpecialTokens: false })).getIds());
    lines.push(JSON.stringify({ text, ids, ids_no_special: idsNoSpecial,
                                decoded: await tok.decode(ids, true),
                                decoded_keep_special: await tok.decode(ids, false),
                                ids_split_special: idsSplitSpecial }));
  }
  for (const c of await decodeCases(tok, src.dir)) lines.push(JSON.stringify({ decode: c }));
  return lines.join('\n') + '\n';
}

async function main() {
  const version = tokenizersVersion();
  const corpusPath = path.join(here, 'corpus.jsonl');
  const corpus = fs.readFileSync(corpusPath);
  const texts = corpus.toString('utf8').split('\n').filter((l) => l.length).map((l) => JSON.parse(l));
  const epoch = process.env.SOURCE_DATE_EPOCH;
  const meta = {
    tokenizers: version, node: process.version,
    date: (epoch ? new Date(Number(epoch) * 1000) : new Date()).toISOString().slice(0, 10),
    corpus: 'tests/tokenizer/corpus.jsonl', corpus_sha256: sha256(corpus), corpus_lines: texts.length,
    command: 'NODE_PATH=SCRATCH/node_modules node tests/tokenizer/gen_goldens.js',
  };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'octet-goldens-'));
  try {
    const sources = tokenizerSources(tmp);
    const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(sources);
    fs.mkdirSync(outDir, { recursive: true });
    for (const name of names) {
      if (!sources[name]) throw new Error(`unknown tokenizer ${name}; have ${Object.keys(sources).join(', ')}`);
      const text = await goldens(name, sources[name], texts, meta);
      fs.writeFileSync(path.join(outDir, `${name}.jsonl`), text);
      console.log(`${name}: ${texts.length} lines -> goldens/${name}.jsonl (${text.length} bytes)`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
