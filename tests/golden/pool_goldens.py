#!/usr/bin/env python3
"""Sentence-embedding goldens derived from the BERT cases' last hidden states.

For every case whose inputs.json names output "last_hidden_state", reads
expected.npy ([batch, seq, hidden], PyTorch's float32 output; padded rows 0)
and writes beside it:
  pooled_mean.npy  [batch, hidden]  sentence-transformers' mean pooling:
                   sum(h * mask, axis=1) / max(mask.sum(axis=1), 1e-9), in float32,
                   mask = 1 for the real tokens (the lengths of the id lists)
  pooled_cls.npy   [batch, hidden]  h[:, 0]: the first ([CLS]) token
  pooled_provenance.json  this script, the formula, numpy's version
The tests (tests/engine/CMakeLists.txt, golden_pooled.*) compare
`octet run MODEL <args> --pooling mean|cls --dump` with them. The files depend
only on expected.npy and inputs.json: rerunning gives the same bytes.

Usage: /usr/bin/python3 tests/golden/pool_goldens.py [--cases tests/golden/cases]
Needs Debian's python3-numpy.
"""
import argparse
import json
import os

import numpy as np


def pool(case_dir):
    with open(os.path.join(case_dir, "inputs.json")) as f:
        inputs = json.load(f)
    if inputs.get("output") != "last_hidden_state":
        return False
    hidden = np.load(os.path.join(case_dir, "expected.npy"))
    assert hidden.dtype == np.float32 and hidden.ndim == 3
    lengths = [len(ids) for ids in inputs["ids"]]
    mask = np.zeros(hidden.shape[:2], dtype=np.float32)
    for b, n in enumerate(lengths):
        mask[b, :n] = 1.0
    summed = (hidden * mask[:, :, None]).sum(axis=1, dtype=np.float32)
    counts = np.maximum(mask.sum(axis=1, dtype=np.float32), np.float32(1e-9))
    mean = (summed / counts[:, None]).astype(np.float32)
    cls = np.ascontiguousarray(hidden[:, 0, :])
    np.save(os.path.join(case_dir, "pooled_mean.npy"), mean)
    np.save(os.path.join(case_dir, "pooled_cls.npy"), cls)
    provenance = {
        "script": "tests/golden/pool_goldens.py",
        "source": "expected.npy (last hidden state) and inputs.json (lengths) of this case",
        "mean": "sentence-transformers mean pooling: sum(h * mask, 1) / max(mask.sum(1), 1e-9), float32",
        "cls": "h[:, 0]",
        "lengths": lengths,
        "numpy": np.__version__,
    }
    with open(os.path.join(case_dir, "pooled_provenance.json"), "w") as f:
        json.dump(provenance, f, indent=2, sort_keys=True)
        f.write("\n")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--cases", default=os.path.join(here, "cases"))
    args = parser.parse_args()
    for name in sorted(os.listdir(args.cases)):
        if pool(os.path.join(args.cases, name)):
            print(f"{name}: pooled_mean.npy, pooled_cls.npy")


if __name__ == "__main__":
    main()
