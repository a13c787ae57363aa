"""A small writer and reader of the safetensors format (written here: the library is not packaged).

File layout: 8-byte little-endian header length N, N bytes of UTF-8 JSON
  {"__metadata__": {str: str}, NAME: {"dtype": "F32"|"F16"|"BF16"|"I64", "shape": [...],
                                      "data_offsets": [begin, end]}, ...}
padded with spaces to a multiple of 8, then the raw little-endian tensor data; offsets are
relative to the start of the data. As the reference library does, tensors are laid out by
decreasing element size, then by name, so each one is aligned to its element size.
"""
import json
import struct

import numpy as np
import torch

DTYPES = {
    "F32": (torch.float32, 4, "<f4"),
    "F16": (torch.float16, 2, "<f2"),
    "BF16": (torch.bfloat16, 2, "<i2"),  # stored as the raw 16 bits
    "I64": (torch.int64, 8, "<i8"),
}


def _to_bytes(tensor, dtype):
    torch_dtype, _, np_dtype = DTYPES[dtype]
    t = tensor.detach().contiguous().to(torch_dtype)
    if dtype == "BF16":
        t = t.view(torch.int16)
    return np.ascontiguousarray(t.numpy()).astype(np_dtype, copy=False).tobytes()


def write(path, tensors, metadata=None):
    """tensors: {name: (torch.Tensor, dtype)}. Float tensors are rounded to dtype (nearest even).

    Returns the number of data bytes written.
    """
    order = sorted(tensors, key=lambda n: (-DTYPES[tensors[n][1]][1], n))
    header = {"__metadata__": dict(metadata or {"format": "pt"})}
    chunks = []
    offset = 0
    for name in order:
        tensor, dtype = tensors[name]
        data = _to_bytes(tensor, dtype)
        header[name] = {"dtype": dtype, "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in chunks:
            f.write(data)
    return offset


def read(path):
    """Returns ({name: (tensor, dtype)}, metadata); floats come back as float32, I64 as int64."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    metadata = header.pop("__metadata__", {})
    out = {}
    end_max = 0
    for name, info in header.items():
        dtype = info["dtype"]
        torch_dtype, size, np_dtype = DTYPES[dtype]
        begin, end = info["data_offsets"]
        count = int(np.prod(info["shape"], dtype=np.int64))
        if end - begin != count * size or end > len(data):
            raise ValueError(f"{path}: bad data_offsets for {name}")
        array = np.frombuffer(data[begin:end], dtype=np_dtype).reshape(info["shape"]).copy()
        t = torch.from_numpy(array)
        if dtype == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = (t.float() if t.is_floating_point() else t, dtype)
        end_max = max(end_max, end)
    if end_max != len(data):
        raise ValueError(f"{path}: {len(data) - end_max} trailing bytes")
    return out, metadata
