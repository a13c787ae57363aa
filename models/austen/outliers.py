#!/usr/bin/python3
"""Makes models/austen-tiny-outliers: models/austen-tiny's function with the outlier channels that
long training gives real models (and that make them lose to int8), by an exact reparametrization.

    /usr/bin/python3 models/austen/outliers.py [--src models/austen-tiny]
        [--out models/austen-tiny-outliers] [--factor 40] [--seed 5]

In each layer, with c = --factor:
  - 2 channels j of each pre-norm (attention's and the feed-forward's) get their RMSNorm weight
    multiplied by c, and column j of every matrix reading that norm (Q, K, V; gate, up) divided
    by c: the norm's output carries a channel c times the others, the products are unchanged;
  - 3 hidden units i of the SwiGLU feed-forward get row i of up multiplied by c and column i of
    down divided by c (silu(gate) * up is linear in up): the down projection's input carries
    units c times the others.
In exact arithmetic the model computes what the source does; the F16 checkpoint rounds the
rescaled weights once more (the held-out perplexity below, from this file, shows the difference).
Round to nearest int8 then crushes every other channel of those inputs into a few levels (per-row
activation scales) and rounds the shrunk weight columns away (per-row weight scales): at c = 40
that loses ~12% perplexity on the model's own text, as the public TinyStories-260K Llama does
(see models/README.md), which one core cannot train to that state in hours.

Writes config.json, tokenizer files (copied), model.safetensors (F16) and metrics.json (what was
changed, the source's sha256, and the fp32 held-out perplexity of source and result in PyTorch,
on the source's heldout_ids.txt).
"""
import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "golden"))
sys.dont_write_bytecode = True

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from ref_models import safetensors_io  # noqa: E402
from ref_models.llama import LlamaForCausalLM  # noqa: E402

SCRIPT = "models/austen/outliers.py"
COPIED = ("config.json", "tokenizer.json", "tokenizer_config.json")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@torch.no_grad()
def heldout_ppl(config, state, path):
    """PyTorch fp32 perplexity over the held-out windows (tokens 1..n-1 of each, as train.py)."""
    model = LlamaForCausalLM(config).eval()
    model.load_state_dict(state, strict=True)
    total, count = 0.0, 0
    with open(path) as f:
        for line in f:
            w = [int(t) for t in line.split()]
            if len(w) < 2:
                continue
            x = torch.tensor([w])
            out = model(x, torch.ones(x.shape, dtype=torch.bool))[0, :-1]
            total += float(F.cross_entropy(out, x[0, 1:], reduction="sum"))
            count += len(w) - 1
    return math.exp(total / count), count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_src = os.path.join(REPO, "models", "austen-tiny")
    default_out = os.path.join(REPO, "models", "austen-tiny-outliers")
    ap.add_argument("--src", default=default_src)
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--factor", type=float, default=40.0)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    for name in COPIED:
        shutil.copy(os.path.join(a.src, name), os.path.join(a.out, name))
    with open(os.path.join(a.src, "config.json")) as f:
        config = json.load(f)
    if config.get("model_type") != "llama" or config.get("hidden_act") != "silu":
        raise SystemExit("outliers.py: a Llama checkpoint with a SwiGLU feed-forward is needed")
    src_file = os.path.join(a.src, "model.safetensors")
    read, _ = safetensors_io.read(src_file)
    source = {k: t.float() for k, (t, _) in read.items()}
    state = {k: t.clone() for k, t in source.items()}
    gen = torch.Generator().manual_seed(a.seed)
    c = a.factor
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    changed = []
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        entry = {"layer": layer}
        for norm, readers in (("input_layernorm", ("self_attn.q_proj", "self_attn.k_proj",
                                                   "self_attn.v_proj")),
                              ("post_attention_layernorm", ("mlp.gate_proj", "mlp.up_proj"))):
            channels = torch.randperm(hidden, generator=gen)[:2]
            state[p + norm + ".weight"][channels] *= c
            for r in readers:
                state[p + r + ".weight"][:, channels] /= c
            entry[norm] = sorted(int(j) for j in channels)
        units = torch.randperm(inter, generator=gen)[:3]
        state[p + "mlp.up_proj.weight"][units, :] *= c
        state[p + "mlp.down_proj.weight"][:, units] /= c
        entry["ffn_hidden"] = sorted(int(i) for i in units)
        changed.append(entry)
    out_file = os.path.join(a.out, "model.safetensors")
    safetensors_io.write(out_file, {k: (v, "F16") for k, v in state.items()})
    written, _ = safetensors_io.read(out_file)
    written = {k: t.float() for k, (t, _) in written.items()}
    heldout = os.path.join(a.src, "heldout_ids.txt")
    ppl_src, scored = heldout_ppl(config, source, heldout)
    ppl_out, _ = heldout_ppl(config, written, heldout)
    metrics = {
        "script": SCRIPT,
        "command": f"/usr/bin/python3 {SCRIPT}"
                   + ("" if a.src == default_src else f" --src {os.path.relpath(a.src, REPO)}")
                   + ("" if a.out == default_out else f" --out {os.path.relpath(a.out, REPO)}")
                   + ("" if c == 40.0 else f" --factor {c:g}") + ("" if a.seed == 5 else f" --seed {a.seed}"),
        "source": {"dir": os.path.relpath(a.src, REPO), "model.safetensors sha256": sha256(src_file)},
        "factor": c, "seed": a.seed, "channels": changed,
        "torch": torch.__version__, "python": platform.python_version(),
        "evaluation": {"file": os.path.relpath(heldout, REPO), "scored_tokens": scored,
                       "fp32_source_ppl": round(ppl_src, 4), "fp32_this_checkpoint_ppl": round(ppl_out, 4)},
        "checkpoint_bytes": os.path.getsize(out_file),
    }
    with open(os.path.join(a.out, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
        f.write("\n")
    print(json.dumps(metrics["evaluation"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
