#!/usr/bin/python3
"""Runs models/austen (or another trained decoder of models/: --model) through octet and compares
with PyTorch: the logits of held-out windows and the held-out perplexity they give.

    /usr/bin/python3 models/austen/check_octet.py --bin build/host/bin [--dtype fp32] [--windows 2]

Converts the checkpoint with `octet-convert --dtype DTYPE`, runs `octet run --dump` on the first
N windows of heldout_ids.txt (one --ids per window), and runs the same windows through the
reference model of the config's model_type (tests/golden/ref_models: Llama, LFM2, Qwen3.5,
RWKV-4) with the F16 checkpoint's weights in fp32. Prints the
max abs error relative to the max abs logit and both perplexities (scored as train.py does:
tokens 1..n-1 of each window). --windows all scores every window.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "golden"))
sys.dont_write_bytecode = True

from ref_models import safetensors_io  # noqa: E402
from ref_models.lfm2 import Lfm2ForCausalLM  # noqa: E402
from ref_models.llama import LlamaForCausalLM  # noqa: E402
from ref_models.qwen3_5 import Qwen3_5ForCausalLM  # noqa: E402
from ref_models.rwkv import RwkvForCausalLM  # noqa: E402

CLASSES = {"llama": LlamaForCausalLM, "lfm2": Lfm2ForCausalLM,
           "qwen3_5_text": Qwen3_5ForCausalLM, "rwkv": RwkvForCausalLM}


def load_reference(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    tensors, _ = safetensors_io.read(os.path.join(model_dir, "model.safetensors"))
    model = CLASSES[config["model_type"]](config).eval()
    model.load_state_dict({k: t for k, (t, _) in tensors.items()}, strict=True)
    return model


def nll(logits, ids):
    """Summed cross-entropy of tokens 1..n-1 given logits [n, V] for the n ids."""
    return float(F.cross_entropy(torch.as_tensor(logits[:-1]), torch.tensor(ids[1:]),
                                 reduction="sum"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="folder with octet-convert and octet")
    ap.add_argument("--model", default=HERE)
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "int8"])
    ap.add_argument("--windows", default="2", help="how many held-out windows, or 'all'")
    ap.add_argument("--batch", type=int, default=4, help="windows per octet run")
    a = ap.parse_args()
    torch.set_num_threads(1)

    with open(os.path.join(a.model, "heldout_ids.txt")) as f:
        windows = [[int(t) for t in line.split()] for line in f if line.strip()]
    if a.windows != "all":
        windows = windows[:int(a.windows)]
    model = load_reference(a.model)

    worst, ref_sum, oct_sum, scored = 0.0, 0.0, 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        octet_file = os.path.join(tmp, "austen.octet")
        subprocess.run([os.path.join(a.bin, "octet-convert"), a.model, "-o", octet_file,
                        "--dtype", a.dtype, "--quiet"], check=True)
        for start in range(0, len(windows), a.batch):
            group = windows[start:start + a.batch]
            dump = os.path.join(tmp, "logits.npy")
            cmd = [os.path.join(a.bin, "octet"), "run", octet_file, "--dump", dump]
            for w in group:
                cmd += ["--ids", ",".join(map(str, w))]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            got = np.load(dump)  # [batch, seq, vocab]
            for b, w in enumerate(group):
                with torch.no_grad():
                    ref = model(torch.tensor([w]), torch.ones(1, len(w), dtype=torch.bool))[0]
                out = got[b, :len(w)]
                err = float(np.abs(out - ref.numpy()).max() / ref.abs().max())
                worst = max(worst, err)
                ref_sum += nll(ref, w)
                oct_sum += nll(out, w)
                scored += len(w) - 1
    print(f"{len(windows)} windows, {scored} scored tokens, octet --dtype {a.dtype}")
    print(f"  logits: max abs error / max abs logit = {worst:.3e}")
    print(f"  held-out perplexity: PyTorch fp32 {math.exp(ref_sum / scored):.4f}, "
          f"octet {a.dtype} {math.exp(oct_sum / scored):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
