#!/usr/bin/python3
"""Trains models/austen: a 3.4 M-parameter Llama-architecture decoder on the six Jane Austen novels
(Debian's r-cran-janeaustenr), with its own 2048-token byte-level BPE, and writes it in Hugging
Face layout (config.json, model.safetensors in F16, tokenizer.json, tokenizer_config.json), with
the held-out token ids and metrics.json.

    apt-get install -y r-cran-janeaustenr sword-text-kjv python3-torch python3-numpy libopenblas0-openmp
    OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 models/austen/train.py

    --preset NAME    austen (default: models/austen) or tiny (models/austen-tiny: hidden 64, 5 layers,
                     8 heads of 8, GQA 8/4, a 512-token BPE; 0.26 M parameters, small and sensitive
                     to int8 like the public TinyStories-260K Llama) or kjv-tiny (models/kjv-tiny:
                     the King James Version from sword-text-kjv, hidden 80, 4 layers, 5 heads of
                     16 sharing one KV head, an untied LM head, a 768-token BPE; 0.39 M parameters)
                     or lfm2-tiny (models/lfm2-tiny: an LFM2 hybrid on the novels, hidden 64,
                     4 gated short-convolution and 2 attention layers, a 512-token BPE)
                     or qwen3_5-tiny (models/qwen3_5-tiny: Qwen3.5's Gated DeltaNet hybrid)
                     or rwkv-tiny (models/rwkv-tiny: an RWKV-4 on the novels, hidden 64,
                     6 blocks, a 512-token BPE)
    --out DIR        where the model goes (default models/<preset dir>)
    --work DIR       scratch: novel texts, fp32 weights, losses (default build/<preset dir>-work)
    --skip-train     export and evaluate the fp32 weights a previous run left in --work

One thread (torch.set_num_threads(1)), fixed seeds. Training took 1,650 s (27.5 min) with Debian's
OpenBLAS (libopenblas0-openmp) on a Xeon with AVX-512; Debian's reference BLAS, which torch uses
without it, is about 30x slower. Tokenizer and export take seconds.
The model is the golden tests' reference Llama (tests/golden/ref_models/llama.py), or for
lfm2-tiny their reference LFM2 (ref_models/lfm2.py), for qwen3_5-tiny their Qwen3.5
(ref_models/qwen3_5.py), for rwkv-tiny their RWKV-4 (ref_models/rwkv.py), imported, so its
parameter names are the Hugging Face checkpoint names octet-convert reads.
"""
import argparse
import collections
import json
import math
import os
import platform
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def keep_freed_memory():
    """glibc gives large freed blocks back to the kernel (munmap, heap trim) and maps them again on
    the next step; on some VMs those page faults cost more than the arithmetic (the tiny preset ran
    18x slower). Keep freed memory in the process: same results, no faults."""
    import ctypes
    libc = ctypes.CDLL(None)
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
    libc.mallopt(m_mmap_threshold, 1 << 30)
    libc.mallopt(m_trim_threshold, 1 << 30)
    libc.mallopt(m_top_pad, 256 << 20)


keep_freed_memory()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "golden"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import bpe  # noqa: E402
import data  # noqa: E402
import kjv  # noqa: E402
from ref_models import safetensors_io  # noqa: E402
from ref_models.lfm2 import Lfm2ForCausalLM  # noqa: E402
from ref_models.llama import LlamaForCausalLM  # noqa: E402
from ref_models import qwen3_5  # noqa: E402
from ref_models import rwkv  # noqa: E402

qwen3_5.SOLVE = "triangular"  # autograd follows the chunk's triangular solve

SCRIPT = "models/austen/train.py"
BOS, EOS = "<s>", "</s>"
SEQ = 256  # training and evaluation window
SEED = 1234

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "vocab_size": 2048, "hidden_size": 256, "intermediate_size": 688,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
    "hidden_act": "silu", "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0, "tie_word_embeddings": True, "attention_bias": False,
    "mlp_bias": False, "bos_token_id": 0, "eos_token_id": 1, "initializer_range": 0.02,
    "use_cache": True, "torch_dtype": "float16",
}

# A preset whose config names another model_type starts from that type's base instead of CONFIG.
LFM2_CONFIG = {
    "architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2",
    "vocab_size": 512, "hidden_size": 64, "intermediate_size": 192,
    "block_auto_adjust_ff_dim": False, "num_hidden_layers": 6,
    "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention"],
    "num_attention_heads": 4, "num_key_value_heads": 2, "conv_L_cache": 3, "conv_bias": False,
    "max_position_embeddings": 512, "norm_eps": 1e-5, "rope_theta": 1000000.0,
    "tie_embedding": True, "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": None,
    "initializer_range": 0.02, "use_cache": True, "torch_dtype": "float16",
}
QWEN3_5_CONFIG = {
    "architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text",
    "vocab_size": 512, "hidden_size": 64, "intermediate_size": 192, "num_hidden_layers": 6,
    "layer_types": ["linear_attention", "linear_attention", "full_attention",
                    "linear_attention", "linear_attention", "full_attention"],
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "hidden_act": "silu",
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16,
    "linear_num_key_heads": 2, "linear_num_value_heads": 4, "attn_output_gate": True,
    "max_position_embeddings": 512, "rms_norm_eps": 1e-6,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000.0,
                        "partial_rotary_factor": 0.25},
    "tie_word_embeddings": True, "bos_token_id": 0, "eos_token_id": 1,
    "initializer_range": 0.02, "use_cache": True, "torch_dtype": "float16",
}
# RWKV-4 as transformers' RwkvConfig saves it (attention_hidden_size and intermediate_size
# written out; rescale_every 6, its default: the stream halved after the last block at
# inference, which the converter carries as ln_out's epsilon x4); an untied head, as every
# published RWKV-4.
RWKV_CONFIG = {
    "architectures": ["RwkvForCausalLM"], "model_type": "rwkv",
    "vocab_size": 512, "context_length": 512, "hidden_size": 64, "num_hidden_layers": 6,
    "attention_hidden_size": 64, "intermediate_size": 128, "layer_norm_epsilon": 1e-5,
    "rescale_every": 6, "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1,
    "use_cache": True, "torch_dtype": "float16",
}
MODEL_CLASSES = {"llama": LlamaForCausalLM, "lfm2": Lfm2ForCausalLM,
                 "qwen3_5_text": qwen3_5.Qwen3_5ForCausalLM, "rwkv": rwkv.RwkvForCausalLM}

TRAIN = dict(steps=1100, batch=16, lr=2e-3, min_lr=2e-4, warmup=100, weight_decay=0.1,
             betas=(0.9, 0.95), grad_clip=1.0, eval_every=200)

# Each preset: its directory under models/, what changes in CONFIG and TRAIN, and its text
# ("austen": the novels, data.py; "kjv": the King James Version, kjv.py). TRAIN's "passage"
# (characters, 0 = whole novels): documents are runs of whole paragraphs of at least that many
# characters, each <s> text </s>, so a training window holds several starts of a document.
TRAIN["passage"] = 0
PRESETS = {
    "austen": ("austen", {}, {}, "austen"),
    # The shape of llama2.c's stories260K (hidden 64, 5 layers, 8 query heads of 8, 4 KV heads,
    # FFN 172, vocab 512, tied): a model whose every layer is narrow enough for int8 to hurt.
    "tiny": ("austen-tiny",
             {"vocab_size": 512, "hidden_size": 64, "intermediate_size": 172,
              "num_hidden_layers": 5, "num_attention_heads": 8, "num_key_value_heads": 4,
              "head_dim": 8, "max_position_embeddings": 512},
             {"steps": 3000, "lr": 4e-3, "min_lr": 4e-4, "eval_every": 500, "passage": 500},
             "austen"),
    # A small sensitive model the converter was not tuned against: other text (the KJV), another
    # shape (hidden 80, 4 layers, 5 query heads of 16 sharing one KV head, FFN 216, a 768-token
    # BPE, an LM head of its own).
    "kjv-tiny": ("kjv-tiny",
                 {"vocab_size": 768, "hidden_size": 80, "intermediate_size": 216,
                  "num_hidden_layers": 4, "num_attention_heads": 5, "num_key_value_heads": 1,
                  "head_dim": 16, "max_position_embeddings": 512, "tie_word_embeddings": False},
                 {"steps": 3000, "lr": 4e-3, "min_lr": 4e-4, "eval_every": 500, "passage": 500},
                 "kjv"),
    # Another architecture on the same text and tokenizer size as tiny: LFM2's hybrid of gated
    # short convolutions (3 taps) and attention with Q/K norms (4 query heads of 16, 2 KV heads),
    # hidden 64, 6 layers, SwiGLU 192, tied.
    "lfm2-tiny": ("lfm2-tiny", LFM2_CONFIG,
                  {"steps": 3000, "lr": 4e-3, "min_lr": 4e-4, "eval_every": 500,
                   "passage": 500},
                  "austen"),
    # Qwen3.5's hybrid on the same text: Gated DeltaNet in four of six layers (2 key heads of
    # 16 shared by 4 value heads of 16, 4 conv taps), gated full attention with zero-centred Q/K
    # norms and partial RoPE in layers 2 and 5, hidden 64, SwiGLU 192, tied.
    "qwen3_5-tiny": ("qwen3_5-tiny", QWEN3_5_CONFIG,
                     {"steps": 3000, "lr": 4e-3, "min_lr": 4e-4, "eval_every": 500,
                      "passage": 500},
                     "austen"),
    # RWKV-4 on the same text: no attention, a WKV recurrence and token shifts in 6 blocks,
    # hidden 64, channel mix 128, an untied head.
    "rwkv-tiny": ("rwkv-tiny", RWKV_CONFIG,
                  {"steps": 3000, "lr": 4e-3, "min_lr": 4e-4, "eval_every": 500, "passage": 500},
                  "austen"),
}
CORPUS = "austen"
VOCAB = CONFIG["vocab_size"]


def apply_preset(name):
    global VOCAB, CORPUS
    _, config, train, CORPUS = PRESETS[name]
    if config.get("model_type", CONFIG["model_type"]) != CONFIG["model_type"]:
        CONFIG.clear()
    CONFIG.update(config)
    TRAIN.update(train)
    VOCAB = CONFIG["vocab_size"]


def log(msg):
    print(msg, flush=True)


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


# --- text and tokens -----------------------------------------------------------------------------

def prepare(work, out):
    """Text -> tokenizer files in `out`, train ids (a tensor) and held-out ids (a list)."""
    if CORPUS == "kjv":
        source = {"sword-text-kjv": kjv.version(), "parts": kjv.PARTS}
        fraction = kjv.HELDOUT_FRACTION
        novels = kjv.load()
    else:
        raw = os.path.join(work, "raw")
        source = {"janeaustenr": data.export_novels(raw), "novels": data.NOVELS}
        fraction = data.HELDOUT_FRACTION
        novels = data.load(raw)
    train_text = "\n\n".join(t for t, _ in novels.values())
    merges = bpe.train(train_text, VOCAB - 2 - 256, log=log)
    tok = bpe.Tokenizer(merges, [BOS, EOS])
    assert len(tok.vocab) == VOCAB and tok.vocab[BOS] == CONFIG["bos_token_id"] \
        and tok.vocab[EOS] == CONFIG["eos_token_id"]
    tok.save(os.path.join(out, "tokenizer.json"), BOS)
    write_json(os.path.join(out, "tokenizer_config.json"), {
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": BOS, "eos_token": EOS,
        "clean_up_tokenization_spaces": False,
        "model_max_length": CONFIG.get("max_position_embeddings", CONFIG.get("context_length"))})
    if bpe.Tokenizer.load(os.path.join(out, "tokenizer.json")).vocab != tok.vocab:
        raise AssertionError("tokenizer.json does not read back")

    # Each novel or testament (its train or its held-out part) is one document: <s> text </s>;
    # or, with a passage length, each run of paragraphs of at least that many characters.
    bos, eos = tok.vocab[BOS], tok.vocab[EOS]
    train_ids, held_ids, split = [], [], {}
    for name, (train, held) in novels.items():
        counts = []
        for text, dest in ((train, train_ids), (held, held_ids)):
            n = 0
            for doc in documents(text, TRAIN["passage"]):
                ids = tok.encode(doc)
                if tok.decode(ids) != doc:
                    raise AssertionError(f"{name}: BPE does not round-trip")
                dest += [bos] + ids + [eos]
                n += len(ids) + 2
            counts.append(n)
        split[name] = {"train_chars": len(train), "heldout_chars": len(held),
                       "train_tokens": counts[0], "heldout_tokens": counts[1],
                       "heldout_starts": held[:60]}
    # One evaluation window per line.
    with open(os.path.join(out, "heldout_ids.txt"), "w") as f:
        for i in range(0, len(held_ids), SEQ):
            f.write(" ".join(map(str, held_ids[i:i + SEQ])) + "\n")
    info = {**source, "split": split,
            "heldout_fraction": fraction, "train_tokens": len(train_ids),
            "heldout_tokens": len(held_ids),
            "chars_per_token": round(len(train_text) / len(train_ids), 3)}
    log(f"tokens: train {len(train_ids)}, held-out {len(held_ids)}, "
        f"{info['chars_per_token']} chars/token")
    return torch.tensor(train_ids), held_ids, info


def documents(text, passage):
    """The documents of a novel's part: the whole text, or runs of whole paragraphs (separated by
    a blank line) of at least `passage` characters (the last run takes what is left)."""
    if passage <= 0:
        return [text]
    docs, cur = [], []
    for para in text.split("\n\n"):
        cur.append(para)
        if sum(len(p) for p in cur) >= passage:
            docs.append("\n\n".join(cur))
            cur = []
    if cur:
        docs.append("\n\n".join(cur))
    return docs


def read_heldout(path):
    """The held-out windows as written: one line of at most SEQ ids each."""
    with open(path) as f:
        return [[int(t) for t in line.split()] for line in f if line.strip()]


# --- model ---------------------------------------------------------------------------------------

def model_class():
    return MODEL_CLASSES[CONFIG["model_type"]]


def new_model():
    """The reference model with GPT-2-style initial weights: N(0, 0.02), the projections that
    write into the residual stream (o_proj/down_proj; LFM2: out_proj, w2) scaled down by
    sqrt(2 * layers)."""
    torch.manual_seed(SEED)
    model = model_class()(CONFIG)
    std = CONFIG.get("initializer_range", 0.02)
    if CONFIG["model_type"] == "rwkv":
        init_rwkv(model, std)
        return model
    gemma_norms = {n + ".weight" for n, m in model.named_modules()
                   if isinstance(m, qwen3_5.GemmaRMSNorm)}
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name in gemma_norms:  # scales by 1 + weight
                p.zero_()
            elif name.endswith("layernorm.weight") or name.endswith("norm.weight"):
                p.fill_(1.0)
            elif name.endswith("conv1d.weight"):
                pass  # PyTorch's own initialisation, as transformers leaves it
            elif name.endswith("A_log"):  # transformers: A ~ U(0, 16), dt_bias 1
                p.copy_(torch.empty_like(p).uniform_(0, 16).log())
            elif name.endswith("dt_bias"):
                p.fill_(1.0)
            elif name.endswith(("o_proj.weight", "down_proj.weight", "out_proj.weight",
                                "w2.weight")):
                p.normal_(0.0, std / math.sqrt(2 * CONFIG["num_hidden_layers"]))
            else:
                p.normal_(0.0, std)
    return model


def init_rwkv(model, std):
    """RWKV-4: N(0, std) for every matrix, attention.output and feed_forward.value (which write
    into the stream) scaled down by sqrt(2 * layers); LayerNorms 1 and 0; time_decay, time_first
    and the token-shift mixes as transformers' RwkvPreTrainedModel._init_weights sets them
    (time_first there is ones_like(...): 1)."""
    layers = CONFIG["num_hidden_layers"]
    h = CONFIG["hidden_size"]
    ramp = torch.tensor([i / h for i in range(h)])[None, None, :]
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                scale = math.sqrt(2 * layers) if name.endswith(
                    ("attention.output.weight", "feed_forward.value.weight")) else 1.0
                p.normal_(0.0, std / scale)
        for name, m in model.named_modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.fill_(1.0)
                m.bias.zero_()
        for i, block in enumerate(model.rwkv.blocks):
            att, ffn = block.attention, block.feed_forward
            ratio_0_to_1 = i / (layers - 1)
            ratio_1_to_almost0 = 1.0 - i / layers
            n = att.time_decay.shape[0]
            att.time_decay.copy_(torch.tensor(
                [-5 + 8 * (j / (n - 1)) ** (0.7 + 1.3 * ratio_0_to_1) for j in range(n)]))
            att.time_first.fill_(1.0)
            att.time_mix_key.copy_(ramp ** ratio_1_to_almost0)
            att.time_mix_value.copy_(ramp ** ratio_1_to_almost0 + 0.3 * ratio_0_to_1)
            att.time_mix_receptance.copy_(ramp ** (0.5 * ratio_1_to_almost0))
            ffn.time_mix_key.copy_(ramp ** ratio_1_to_almost0)
            ffn.time_mix_receptance.copy_(ramp ** ratio_1_to_almost0)


def logits(model, ids):
    """ids [B, S] -> logits [B, S, V] (no padding). RWKV as transformers' RwkvModel runs it:
    training, the unscaled model (its WKV in chunks, the same sums); evaluation, the inference
    rescaling (rescale_every) and transformers' CPU loop."""
    if CONFIG["model_type"] == "rwkv":
        model.form = "plain" if model.training else "rescaled"
        rwkv.WKV = "chunked" if model.training else "loop"
    return model(ids, torch.ones(ids.shape, dtype=torch.bool))


@torch.no_grad()
def heldout_loss(model, windows):
    """Mean cross-entropy (nats) over the held-out windows: each window is read whole and its tokens
    1..n-1 are scored (the first token of a window has no context and is not scored).
    Returns (loss, scored tokens)."""
    model.eval()
    total, count = 0.0, 0
    for w in windows:
        if len(w) < 2:
            continue
        x = torch.tensor([w])
        out = logits(model, x)[0, :-1]
        total += float(F.cross_entropy(out, x[0, 1:], reduction="sum"))
        count += len(w) - 1
    model.train()
    return total / count, count


def unigram_loss(train_ids, windows):
    """The baseline: each token predicted by its training frequency (add-one smoothed)."""
    counts = torch.bincount(train_ids, minlength=VOCAB).double() + 1.0
    logp = torch.log(counts / counts.sum())
    scored = [t for w in windows for t in w[1:]]
    return float(-logp[torch.tensor(scored)].mean())


def lr_at(step):
    t = TRAIN
    if step < t["warmup"]:
        return t["lr"] * (step + 1) / t["warmup"]
    progress = (step - t["warmup"]) / max(1, t["steps"] - t["warmup"])
    return t["min_lr"] + 0.5 * (t["lr"] - t["min_lr"]) * (1 + math.cos(math.pi * progress))


def train(model, train_ids, windows):
    t = TRAIN
    # Matrices decay; RWKV's token-shift mixes ([1, 1, H]) do not, as vectors do not.
    def decays(name, p):
        return p.dim() >= 2 and ".time_mix_" not in name

    decay = [p for n, p in model.named_parameters() if decays(n, p)]
    no_decay = [p for n, p in model.named_parameters() if not decays(n, p)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": t["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=t["lr"], betas=t["betas"], eps=1e-8)
    gen = torch.Generator().manual_seed(SEED)
    offsets = torch.arange(SEQ + 1)
    history, recent = [], collections.deque(maxlen=50)
    start = time.time()
    model.train()
    for step in range(t["steps"]):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        starts = torch.randint(0, len(train_ids) - SEQ - 1, (t["batch"], 1), generator=gen)
        chunk = train_ids[starts + offsets]  # [B, SEQ + 1]
        out = logits(model, chunk[:, :-1])  # [B, SEQ, V]
        loss = F.cross_entropy(out.reshape(-1, VOCAB), chunk[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), t["grad_clip"])
        opt.step()
        recent.append(float(loss))
        done = step + 1
        if done % 25 == 0 or done == t["steps"]:
            train_loss = sum(recent) / len(recent)
            entry = {"step": done, "train_loss": round(train_loss, 4),
                     "seconds": round(time.time() - start, 1)}
            if done % t["eval_every"] == 0 or done == t["steps"]:
                entry["heldout_loss"] = round(heldout_loss(model, windows)[0], 4)
            history.append(entry)
            log(f"step {done:5d}  lr {lr_at(step):.2e}  train {train_loss:.4f}"
                + (f"  held-out {entry['heldout_loss']:.4f}" if "heldout_loss" in entry else "")
                + f"  {entry['seconds']:.0f} s")
    return history, time.time() - start


# --- export --------------------------------------------------------------------------------------

def export(model, out):
    """model.safetensors in F16 with the Hugging Face names (tied: no lm_head.weight; RWKV's
    time_decay and time_first in F32, as transformers keeps them); returns the model as the file
    holds it (F16-rounded weights, computed in fp32)."""
    sd = model.state_dict()
    path = os.path.join(out, "model.safetensors")
    keep32 = ("time_decay", "time_first") if CONFIG["model_type"] == "rwkv" else ()
    safetensors_io.write(path, {k: (v, "F32" if k.endswith(keep32) else "F16")
                                for k, v in sd.items()})
    back, _ = safetensors_io.read(path)
    shipped = model_class()(CONFIG).eval()
    shipped.load_state_dict({k: t for k, (t, _) in back.items()}, strict=True)
    write_json(os.path.join(out, "config.json"), CONFIG)
    return shipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="austen")
    ap.add_argument("--out")
    ap.add_argument("--work")
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a TRAIN setting (numbers), for experiments")
    a = ap.parse_args()
    apply_preset(a.preset)
    for item in a.set:
        key, value = item.split("=", 1)
        if key not in TRAIN:
            raise SystemExit(f"--set: no training setting '{key}' (have {sorted(TRAIN)})")
        TRAIN[key] = type(TRAIN[key])(float(value)) if not isinstance(TRAIN[key], tuple) else TRAIN[key]
    folder = PRESETS[a.preset][0]
    a.out = a.out or os.path.join(REPO, "models", folder)
    a.work = a.work or os.path.join(REPO, "build", folder + "-work")
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)

    train_ids, held_ids, info = prepare(a.work, a.out)
    windows = read_heldout(os.path.join(a.out, "heldout_ids.txt"))
    model = new_model()
    params = sum(p.numel() for p in model.parameters())
    log(f"model: {params} parameters; training {TRAIN}")
    weights = os.path.join(a.work, "model_fp32.pt")
    state = os.path.join(a.work, "train_state.json")
    if a.skip_train:
        model.load_state_dict(torch.load(weights))
        with open(state) as f:
            run = json.load(f)
    else:
        history, seconds = train(model, train_ids, windows)
        torch.save(model.state_dict(), weights)
        run = {"history": history, "seconds": round(seconds, 1)}
        write_json(state, run)
    model.eval()

    fp32_loss, scored = heldout_loss(model, windows)
    shipped = export(model, a.out)
    f16_loss, _ = heldout_loss(shipped, windows)
    uni = unigram_loss(train_ids, windows)
    last = run["history"][-1]
    metrics = {
        "script": SCRIPT, "command": f"OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 {SCRIPT}"
                                     + ("" if a.preset == "austen" else f" --preset {a.preset}"),
        "seed": SEED, "torch": torch.__version__, "numpy": np.__version__,
        "python": platform.python_version(), "threads": torch.get_num_threads(),
        "parameters": params, "config": {k: CONFIG[k] for k in (
            "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
            "head_dim", "intermediate_size", "vocab_size", "layer_types", "rescale_every",
            "context_length") if k in CONFIG},
        "data": info,
        "training": {**{k: v for k, v in TRAIN.items()}, "seq_len": SEQ,
                     "tokens_seen": TRAIN["steps"] * TRAIN["batch"] * SEQ,
                     "epochs": round(TRAIN["steps"] * TRAIN["batch"] * SEQ / len(train_ids), 2),
                     "seconds": run["seconds"], "history": run["history"]},
        "evaluation": {
            "file": "heldout_ids.txt",
            "method": f"windows of {SEQ} ids (one per line), each read whole; tokens 1..n-1 of "
                      "each window scored; mean cross-entropy in nats, perplexity = exp(loss)",
            "scored_tokens": scored,
            "train_loss_last50": last["train_loss"],
            "fp32_trained": {"loss": round(fp32_loss, 4), "ppl": round(math.exp(fp32_loss), 3)},
            "fp32_from_f16_checkpoint": {"loss": round(f16_loss, 4),
                                         "ppl": round(math.exp(f16_loss), 3)},
            "unigram_baseline": {"loss": round(uni, 4), "ppl": round(math.exp(uni), 3)},
        },
        "checkpoint_bytes": os.path.getsize(os.path.join(a.out, "model.safetensors")),
    }
    write_json(os.path.join(a.out, "metrics.json"), metrics)
    log(json.dumps(metrics["evaluation"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
