#!/usr/bin/python3
"""Trains models/mbert-tiny: a small ModernBERT encoder (masked-language model) on the six Jane
Austen novels, with austen-tiny's 512-token BPE and text split, and writes it in Hugging Face
`ModernBertForMaskedLM` layout (config.json, model.safetensors in F16, tokenizer.json,
tokenizer_config.json), with the held-out token ids and metrics.json.

    apt-get install -y r-cran-janeaustenr python3-torch python3-numpy libopenblas0-openmp
    OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 models/austen/train_mlm.py

    --out DIR        where the model goes (default models/mbert-tiny)
    --work DIR       scratch: novel texts, fp32 weights, losses (default build/mbert-tiny-work)
    --skip-train     export and evaluate the fp32 weights a previous run left in --work
    --octet BIN      no training: check the shipped checkpoint against octet (BIN holds
                     octet-convert and octet): converts it to fp32 and int8 (no flags), runs
                     the held-out windows through `octet run --dump` and compares the last
                     hidden state with PyTorch's; the held-out MLM loss from octet's hidden
                     states (through the PyTorch head); adds the figures to metrics.json

The encoder is the golden tests' reference ModernBERT (tests/golden/ref_models/modernbert.py),
imported, so its parameter names are the Hugging Face checkpoint names octet-convert reads; the
masked-LM head (head.dense, GELU, head.norm, a decoder tied to the token embeddings with a bias)
is written here with ModernBertForMaskedLM's names. octet ignores the head.

Tokens: austen-tiny's tokenizer (ids 0..511 unchanged: <s> 0, </s> 1, 256 bytes, 254 merges) with
two special tokens added, <pad> 512 and <mask> 513 (vocab 514). <s> serves as the classification
token and </s> as the separator (RoBERTa's convention); the post-processor writes <s> A </s>.
Training windows of 128 ids are drawn from the paragraph-run documents <s> text </s> that
austen-tiny trained on; 15% of the ordinary tokens of a window are chosen as BERT does (80% of
them become <mask>, 10% a random ordinary token, 10% stay) and only those are scored.

One thread (torch.set_num_threads(1)), fixed seeds.
"""
import argparse
import collections
import json
import math
import os
import platform
import sys
import subprocess
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import train as base  # noqa: E402  (the causal recipe: text, documents, helpers; sets up malloc)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import bpe  # noqa: E402
import data  # noqa: E402
from ref_models import safetensors_io  # noqa: E402
from ref_models.common import ACTIVATIONS  # noqa: E402
from ref_models.modernbert import ModernBertModel, layer_norm  # noqa: E402

REPO = base.REPO
SCRIPT = "models/austen/train_mlm.py"
SOURCE_TOKENIZER = "models/austen-tiny/tokenizer.json"
CLS, SEP, PAD, MASK = "<s>", "</s>", "<pad>", "<mask>"
SEQ = 128  # training and evaluation window
SEED = 1234
EVAL_SEED = 4321  # the held-out masks

CONFIG = {
    "architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert",
    "vocab_size": 514, "hidden_size": 96, "intermediate_size": 128,
    "num_hidden_layers": 6, "num_attention_heads": 4, "hidden_activation": "gelu",
    "max_position_embeddings": 512, "norm_eps": 1e-5, "norm_bias": False,
    "attention_bias": False, "mlp_bias": False, "attention_dropout": 0.0,
    "embedding_dropout": 0.0, "mlp_dropout": 0.0,
    "global_attn_every_n_layers": 3, "local_attention": 32,
    "global_rope_theta": 160000.0, "local_rope_theta": 10000.0,
    "classifier_pooling": "mean", "classifier_activation": "gelu", "classifier_bias": False,
    "decoder_bias": True, "tie_word_embeddings": True,
    "pad_token_id": 512, "bos_token_id": 0, "eos_token_id": 1, "cls_token_id": 0,
    "sep_token_id": 1, "initializer_range": 0.02, "torch_dtype": "float16",
}
VOCAB = CONFIG["vocab_size"]
PAD_ID, MASK_ID = 512, 513
ORDINARY = (2, 512)  # ids a chosen token may be replaced by: bytes and merges

TRAIN = dict(steps=3000, batch=32, lr=3e-3, min_lr=3e-4, warmup=200, weight_decay=0.01,
             betas=(0.9, 0.98), grad_clip=1.0, eval_every=500, passage=500, mask_prob=0.15)

log = base.log
write_json = base.write_json


# --- tokenizer and text --------------------------------------------------------------------------

def tokenizer_files(out):
    """austen-tiny's tokenizer.json with <pad> and <mask> added and the template <s> A </s>;
    returns the bpe.Tokenizer for encoding (the added ids never come out of the text)."""
    tok = bpe.Tokenizer.load(os.path.join(REPO, SOURCE_TOKENIZER))
    assert len(tok.vocab) == 512 and tok.vocab[CLS] == 0 and tok.vocab[SEP] == 1
    spec = tok.tokenizer_json(CLS)
    for token, i, lstrip in ((PAD, PAD_ID, False), (MASK, MASK_ID, True)):
        # <mask> takes the space before it, as RoBERTa's and ModernBERT's do: "a <mask> b"
        # masks the token " word" of "a word b".
        spec["added_tokens"].append({"id": i, "content": token, "single_word": False,
                                     "lstrip": lstrip, "rstrip": False, "normalized": False,
                                     "special": True})
        spec["model"]["vocab"][token] = i
    cls = {"SpecialToken": {"id": CLS, "type_id": 0}}
    sep = {"SpecialToken": {"id": SEP, "type_id": 0}}
    seq_a = {"Sequence": {"id": "A", "type_id": 0}}
    spec["post_processor"]["processors"][1] = {
        "type": "TemplateProcessing",
        "single": [cls, seq_a, sep],
        "pair": [cls, seq_a, sep, {"Sequence": {"id": "B", "type_id": 1}},
                 {"SpecialToken": {"id": SEP, "type_id": 1}}],
        "special_tokens": {CLS: {"id": CLS, "ids": [0], "tokens": [CLS]},
                           SEP: {"id": SEP, "ids": [1], "tokens": [SEP]}},
    }
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False, indent=1)
        f.write("\n")
    write_json(os.path.join(out, "tokenizer_config.json"), {
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": CLS, "eos_token": SEP,
        "cls_token": CLS, "sep_token": SEP, "pad_token": PAD, "mask_token": MASK,
        "clean_up_tokenization_spaces": False, "model_input_names": ["input_ids", "attention_mask"],
        "model_max_length": CONFIG["max_position_embeddings"]})
    return tok


def prepare(work, out):
    """The novels -> train ids (a tensor), held-out windows (lists of SEQ ids) and the data info.
    The documents are austen-tiny's: runs of whole paragraphs of at least 500 characters, each
    <s> text </s>; the held-out stream is checked against austen-tiny's heldout_ids.txt."""
    tok = tokenizer_files(out)
    raw = os.path.join(work, "raw")
    version = data.export_novels(raw)
    novels = data.load(raw)
    train_ids, held_ids, split = [], [], {}
    for name, (train, held) in novels.items():
        counts = []
        for text, dest in ((train, train_ids), (held, held_ids)):
            n = 0
            for doc in base.documents(text, TRAIN["passage"]):
                ids = tok.encode(doc)
                dest += [0] + ids + [1]
                n += len(ids) + 2
            counts.append(n)
        split[name] = {"train_tokens": counts[0], "heldout_tokens": counts[1]}
    with open(os.path.join(REPO, "models", "austen-tiny", "heldout_ids.txt")) as f:
        tiny = [int(t) for line in f for t in line.split()]
    if tiny != held_ids:
        raise AssertionError("the held-out ids differ from austen-tiny's")
    windows = [held_ids[i:i + SEQ] for i in range(0, len(held_ids), SEQ)]
    with open(os.path.join(out, "heldout_ids.txt"), "w") as f:
        for w in windows:
            f.write(" ".join(map(str, w)) + "\n")
    info = {"janeaustenr": version, "novels": data.NOVELS, "split": split,
            "heldout_fraction": data.HELDOUT_FRACTION, "documents": "runs of whole paragraphs "
            f"of at least {TRAIN['passage']} characters, each <s> text </s> (austen-tiny's)",
            "train_tokens": len(train_ids), "heldout_tokens": len(held_ids),
            "heldout_windows": len(windows)}
    log(f"tokens: train {len(train_ids)}, held-out {len(held_ids)} in {len(windows)} windows")
    return torch.tensor(train_ids), windows, info


def mask_tokens(ids, gen, replace=True):
    """BERT's corruption: each ordinary token (not <s>, </s>, <pad>) is chosen with mask_prob;
    a chosen one becomes <mask> (80%), a random ordinary token (10%) or stays (10%); with
    replace False every chosen one becomes <mask>. Returns (inputs, chosen: bool)."""
    ordinary = (ids >= ORDINARY[0]) & (ids < ORDINARY[1])
    chosen = (torch.rand(ids.shape, generator=gen) < TRAIN["mask_prob"]) & ordinary
    inputs = ids.clone()
    r = torch.rand(ids.shape, generator=gen)
    rand = torch.randint(ORDINARY[0], ORDINARY[1], ids.shape, generator=gen)
    if replace:
        inputs[chosen & (r < 0.8)] = MASK_ID
        swap = chosen & (r >= 0.8) & (r < 0.9)
        inputs[swap] = rand[swap]
    else:
        inputs[chosen] = MASK_ID
    return inputs, chosen


# --- model ---------------------------------------------------------------------------------------

class ModernBertPredictionHead(nn.Module):
    """ModernBertForMaskedLM's head: norm(act(dense(x)))."""

    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"],
                               bias=c.get("classifier_bias", False))
        self.act = ACTIVATIONS[c.get("classifier_activation", "gelu")]
        self.norm = layer_norm(c)

    def forward(self, x):
        return self.norm(self.act(self.dense(x)))


class ModernBertForMaskedLM(nn.Module):
    """model (the encoder), head, decoder (weight tied to the token embeddings, with a bias)."""

    def __init__(self, c):
        super().__init__()
        self.model = ModernBertModel(c)
        self.head = ModernBertPredictionHead(c)
        self.decoder = nn.Linear(c["hidden_size"], c["vocab_size"], bias=c["decoder_bias"])
        self.decoder.weight = self.model.embeddings.tok_embeddings.weight

    def forward(self, ids, chosen):
        """Logits [N, V] at the chosen positions (bool [B, S]) only."""
        hidden = self.model(ids, torch.ones(ids.shape, dtype=torch.bool))
        return self.decoder(self.head(hidden[chosen]))


def new_model():
    """N(0, 0.02) for every matrix, the two Wo (attention, MLP: they write into the residual
    stream) scaled down by sqrt(2 * layers); norms 1, decoder bias 0."""
    torch.manual_seed(SEED)
    model = ModernBertForMaskedLM(CONFIG)
    std = CONFIG["initializer_range"]
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            elif name.endswith(".bias"):
                p.zero_()
            elif name.endswith("Wo.weight"):
                p.normal_(0.0, std / math.sqrt(2 * CONFIG["num_hidden_layers"]))
            else:
                p.normal_(0.0, std)
    return model


@torch.no_grad()
def evaluate(model, windows, replace):
    """Held-out MLM loss (nats) and top-1 accuracy at the chosen positions; the masks come from
    EVAL_SEED (window by window, in file order), so every evaluation scores the same tokens."""
    model.eval()
    gen = torch.Generator().manual_seed(EVAL_SEED)
    total, correct, count = 0.0, 0, 0
    for w in windows:
        ids = torch.tensor([w])
        inputs, chosen = mask_tokens(ids, gen, replace)
        if not chosen.any():
            continue
        out = model(inputs, chosen)
        target = ids[chosen]
        total += float(F.cross_entropy(out, target, reduction="sum"))
        correct += int((out.argmax(-1) == target).sum())
        count += int(chosen.sum())
    model.train()
    return {"loss": round(total / count, 4), "accuracy": round(correct / count, 4),
            "scored_tokens": count}


def unigram_loss(train_ids, windows):
    """The baseline: each chosen token predicted by its training frequency (add-one smoothed)."""
    counts = torch.bincount(train_ids, minlength=VOCAB).double() + 1.0
    logp = torch.log(counts / counts.sum())
    gen = torch.Generator().manual_seed(EVAL_SEED)
    targets = []
    for w in windows:
        ids = torch.tensor([w])
        _, chosen = mask_tokens(ids, gen, False)
        targets.append(ids[chosen])
    t = torch.cat(targets)
    return {"loss": round(float(-logp[t].mean()), 4),
            "accuracy": round(float((t == int(counts.argmax())).double().mean()), 4)}


def lr_at(step):
    t = TRAIN
    if step < t["warmup"]:
        return t["lr"] * (step + 1) / t["warmup"]
    progress = (step - t["warmup"]) / max(1, t["steps"] - t["warmup"])
    return t["min_lr"] + 0.5 * (t["lr"] - t["min_lr"]) * (1 + math.cos(math.pi * progress))


def train(model, train_ids, windows):
    t = TRAIN
    params = list(model.parameters())  # the tied decoder weight once
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": t["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=t["lr"], betas=t["betas"], eps=1e-8)
    gen = torch.Generator().manual_seed(SEED)
    offsets = torch.arange(SEQ)
    history, recent = [], collections.deque(maxlen=50)
    start = time.time()
    model.train()
    for step in range(t["steps"]):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        starts = torch.randint(0, len(train_ids) - SEQ, (t["batch"], 1), generator=gen)
        ids = train_ids[starts + offsets]  # [B, SEQ]
        inputs, chosen = mask_tokens(ids, gen)
        loss = F.cross_entropy(model(inputs, chosen), ids[chosen])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, t["grad_clip"])
        opt.step()
        recent.append(float(loss))
        done = step + 1
        if done % 25 == 0 or done == t["steps"]:
            entry = {"step": done, "train_loss": round(sum(recent) / len(recent), 4),
                     "seconds": round(time.time() - start, 1)}
            if done % t["eval_every"] == 0 or done == t["steps"]:
                held = evaluate(model, windows, True)
                entry["heldout_loss"], entry["heldout_accuracy"] = held["loss"], held["accuracy"]
            history.append(entry)
            log(f"step {done:5d}  lr {lr_at(step):.2e}  train {entry['train_loss']:.4f}"
                + (f"  held-out {entry['heldout_loss']:.4f} acc {entry['heldout_accuracy']:.4f}"
                   if "heldout_loss" in entry else "")
                + f"  {entry['seconds']:.0f} s")
    return history, time.time() - start


# --- export --------------------------------------------------------------------------------------

def export(model, out):
    """model.safetensors in F16 with ModernBertForMaskedLM's names (decoder.weight is the tied
    token table: not written); returns the model as the file holds it (computed in fp32)."""
    sd = {k: v for k, v in model.state_dict().items() if k != "decoder.weight"}
    path = os.path.join(out, "model.safetensors")
    safetensors_io.write(path, {k: (v, "F16") for k, v in sd.items()})
    back, _ = safetensors_io.read(path)
    shipped = ModernBertForMaskedLM(CONFIG).eval()
    missing, unexpected = shipped.load_state_dict({k: t for k, (t, _) in back.items()},
                                                  strict=False)
    if missing != ["decoder.weight"] or unexpected:
        raise AssertionError(f"checkpoint names: missing {missing}, unexpected {unexpected}")
    write_json(os.path.join(out, "config.json"), CONFIG)
    return shipped


# --- octet ---------------------------------------------------------------------------------------

def load_shipped(out):
    """The model as model.safetensors holds it (F16 weights, computed in fp32)."""
    back, _ = safetensors_io.read(os.path.join(out, "model.safetensors"))
    model = ModernBertForMaskedLM(CONFIG).eval()
    model.load_state_dict({k: t for k, (t, _) in back.items()}, strict=False)
    return model


def octet_hidden(binary, model_file, batch, work):
    """octet run MODEL --ids ... --dump: the last hidden state [B, S, hidden] of equal-length
    windows."""
    dump = os.path.join(work, "octet_dump.npy")
    cmd = [binary, "run", model_file, "--threads", "1", "--dump", dump]
    for w in batch:
        cmd += ["--ids", ",".join(map(str, w))]
    subprocess.run(cmd, check=True, capture_output=True)
    return torch.from_numpy(np.load(dump).astype(np.float32))


def batches(windows, size=16, ids=lambda w: w):
    """Runs of at most `size` windows of one length (the last window is shorter)."""
    out = []
    for w in windows:
        if out and len(out[-1]) < size and len(ids(out[-1][0])) == len(ids(w)):
            out[-1].append(w)
        else:
            out.append([w])
    return out


@torch.no_grad()
def check_octet(bin_dir, out, work):
    windows = [[int(t) for t in line.split()]
               for line in open(os.path.join(out, "heldout_ids.txt")) if line.strip()]
    model = load_shipped(out)
    files = {}
    for dtype in ("fp32", "int8"):
        files[dtype] = os.path.join(work, f"mbert-tiny-{dtype}.octet")
        cmd = [os.path.join(bin_dir, "octet-convert"), out, "-o", files[dtype], "--quiet"]
        subprocess.run(cmd + (["--dtype", "fp32"] if dtype == "fp32" else []), check=True)
    octet = os.path.join(bin_dir, "octet")
    ones = lambda ids: torch.ones(ids.shape, dtype=torch.bool)  # noqa: E731
    # The plain windows: octet's last hidden state against PyTorch's.
    rel = {"fp32": [], "int8": []}
    cos = []
    for batch in batches(windows):
        ids = torch.tensor(batch)
        ref = model.model(ids, ones(ids))
        for dtype in ("fp32", "int8"):
            got = octet_hidden(octet, files[dtype], batch, work)
            rel[dtype].append(float(((got - ref).norm(dim=-1) / ref.norm(dim=-1)).max()))
            rel[dtype + "_max"] = max(rel.get(dtype + "_max", 0.0),
                                      float((got - ref).abs().max() / ref.abs().max()))
            if dtype == "int8":
                cos.append(F.cosine_similarity(got, ref, dim=-1).flatten())
    cos = torch.cat(cos)
    # The masked windows of the evaluation: MLM loss and accuracy from octet's hidden states.
    gen = torch.Generator().manual_seed(EVAL_SEED)
    masked = []
    for w in windows:
        ids = torch.tensor([w])
        inputs, chosen = mask_tokens(ids, gen, True)
        masked.append((inputs[0].tolist(), w, chosen[0]))
    mlm = {}
    for name in ("pytorch", "fp32", "int8"):
        total, correct, count = 0.0, 0, 0
        for group in batches(masked, ids=lambda m: m[0]):
            inputs = torch.tensor([m[0] for m in group])
            target = torch.tensor([m[1] for m in group])
            chosen = torch.stack([m[2] for m in group])
            hidden = model.model(inputs, ones(inputs)) if name == "pytorch" else \
                octet_hidden(octet, files[name], [m[0] for m in group], work)
            logits = model.decoder(model.head(hidden[chosen]))
            total += float(F.cross_entropy(logits, target[chosen], reduction="sum"))
            correct += int((logits.argmax(-1) == target[chosen]).sum())
            count += int(chosen.sum())
        mlm[name] = {"loss": round(total / count, 4), "accuracy": round(correct / count, 4)}
    result = {
        "method": "octet-convert models/mbert-tiny (no flags: int8; --dtype fp32); the held-out "
                  "windows through `octet run --ids ... --dump` (last hidden state) against "
                  "PyTorch fp32 from the F16 checkpoint. rel: per position |octet - torch| / "
                  "|torch| (L2 over the hidden vector), the largest; max_abs_rel: the largest "
                  "element difference / the largest |torch| element. MLM: octet's hidden states "
                  "of the masked evaluation windows through the PyTorch head",
        "windows": len(windows), "positions": int(cos.numel()),
        "fp32": {"rel": float(f"{max(rel['fp32']):.3g}"),
                 "max_abs_rel": float(f"{rel['fp32_max']:.3g}")},
        "int8": {"rel": float(f"{max(rel['int8']):.3g}"),
                 "max_abs_rel": float(f"{rel['int8_max']:.3g}"),
                 "cosine_min": round(float(cos.min()), 6),
                 "cosine_mean": round(float(cos.mean()), 6),
                 "cosine_p01": round(float(cos.quantile(0.01)), 6)},
        "mlm_bert_80_10_10": mlm,
        "file_bytes": {d: os.path.getsize(f) for d, f in files.items()},
    }
    log(json.dumps(result, indent=2))
    path = os.path.join(out, "metrics.json")
    with open(path) as f:
        metrics = json.load(f)
    metrics["octet"] = result
    write_json(path, metrics)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "models", "mbert-tiny"))
    ap.add_argument("--work", default=os.path.join(REPO, "build", "mbert-tiny-work"))
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--octet", metavar="BIN")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a TRAIN setting (numbers), for experiments")
    a = ap.parse_args()
    for item in a.set:
        key, value = item.split("=", 1)
        if key not in TRAIN or isinstance(TRAIN[key], tuple):
            raise SystemExit(f"--set: no numeric training setting '{key}'")
        TRAIN[key] = type(TRAIN[key])(float(value))
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    if a.octet:
        check_octet(a.octet, a.out, a.work)
        return 0

    train_ids, windows, info = prepare(a.work, a.out)
    model = new_model()
    params = sum(p.numel() for p in model.parameters())
    encoder = sum(p.numel() for p in model.model.parameters())
    log(f"model: {params} parameters ({encoder} in the encoder); training {TRAIN}")
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

    fp32 = evaluate(model, windows, True)
    shipped = export(model, a.out)
    f16 = evaluate(shipped, windows, True)
    f16_all = evaluate(shipped, windows, False)
    metrics = {
        "script": SCRIPT, "command": f"OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 {SCRIPT}",
        "seed": SEED, "torch": torch.__version__, "numpy": np.__version__,
        "python": platform.python_version(), "threads": torch.get_num_threads(),
        "parameters": params, "encoder_parameters": encoder,
        "config": {k: CONFIG[k] for k in (
            "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
            "vocab_size", "global_attn_every_n_layers", "local_attention", "global_rope_theta",
            "local_rope_theta")},
        "tokenizer": f"{SOURCE_TOKENIZER} (ids 0..511) + <pad> 512, <mask> 513; <s> is the "
                     "classification token, </s> the separator; template <s> A </s>",
        "data": info,
        "training": {**TRAIN, "seq_len": SEQ,
                     "tokens_seen": TRAIN["steps"] * TRAIN["batch"] * SEQ,
                     "epochs": round(TRAIN["steps"] * TRAIN["batch"] * SEQ / len(train_ids), 2),
                     "seconds": run["seconds"], "history": run["history"]},
        "evaluation": {
            "file": "heldout_ids.txt",
            "method": f"windows of {SEQ} ids (one per line); in each, {TRAIN['mask_prob']:.0%} "
                      f"of the ordinary tokens chosen with a generator seeded {EVAL_SEED} "
                      "(window by window in file order); cross-entropy (nats) and top-1 "
                      "accuracy of the MLM head at the chosen positions",
            "bert_80_10_10": "chosen tokens corrupted as in training (80% <mask>, 10% random, "
                             "10% kept)",
            "all_mask": "every chosen token replaced by <mask>",
            "scored_tokens": f16["scored_tokens"],
            "train_loss_last50": run["history"][-1]["train_loss"],
            "fp32_trained_bert_80_10_10": {k: fp32[k] for k in ("loss", "accuracy")},
            "fp32_from_f16_checkpoint_bert_80_10_10": {k: f16[k] for k in ("loss", "accuracy")},
            "fp32_from_f16_checkpoint_all_mask": {k: f16_all[k] for k in ("loss", "accuracy")},
            "unigram_baseline": unigram_loss(train_ids, windows),
        },
        "checkpoint_bytes": os.path.getsize(os.path.join(a.out, "model.safetensors")),
    }
    write_json(os.path.join(a.out, "metrics.json"), metrics)
    log(json.dumps(metrics["evaluation"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
