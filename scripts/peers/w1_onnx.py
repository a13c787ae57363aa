"""W1 (the 12 BERT layers, hidden states [1, 128, 768] in and out) as ONNX models for ONNX Runtime.

Hand-built with python3-onnx (no onnxruntime Python package here). Two dynamic-int8 forms; the
benchmark reports the faster one ("best form"):
  w1-int8-mmi.onnx    standard ONNX: DynamicQuantizeLinear (u8) -> MatMulInteger (s8 weights,
                      per-column scales) -> Cast -> Mul, as onnxruntime's quantize_dynamic emits
                      (ORT fuses it into DynamicQuantizeMatMul at load); LayerNormalization, erf GELU.
  w1-int8-fused.onnx  ORT's transformer-optimizer form with com.microsoft ops: QAttention (one weight
                      scale per tensor), DynamicQuantizeMatMul, SkipLayerNormalization, BiasGelu.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from workloads import W1

MS = "com.microsoft"


def _quant_cols(wt):
    """wt [in, out] -> int8 [in, out] and one scale per column (symmetric)."""
    s = np.abs(wt).max(axis=0) / 127.0
    s[s == 0] = 1.0
    return np.clip(np.round(wt / s), -127, 127).astype(np.int8), s.astype(np.float32)


class _Graph:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def init(self, name, a):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(a), name))
        return name

    def op(self, op_type, inputs, n_out=1, domain=None, **attrs):
        self.n += 1
        outs = [f"t{self.n}_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=f"n{self.n}_{op_type}",
                                           domain=domain, **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, name, opsets):
        c = W1
        shape = [1, c["seq"], c["d"]]
        self.nodes[-1].output[0] = "y"
        g = helper.make_graph(self.nodes, name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                              producer_name="octet scripts/peers/w1_onnx.py")
        m.ir_version = 8
        return m


def build_mmi(w):
    c, g = W1, _Graph()
    T, D, H, hd = c["seq"], c["d"], c["heads"], c["d"] // c["heads"]
    heads_shape = g.init("heads_shape", np.array([1, T, H, hd], np.int64))
    model_shape = g.init("model_shape", np.array([1, T, D], np.int64))
    scale = g.init("att_scale", np.array(1.0 / np.sqrt(hd), np.float32))
    sqrt2 = g.init("sqrt2", np.array(np.sqrt(2.0), np.float32))
    one = g.init("one", np.array(1.0, np.float32))
    half = g.init("half", np.array(0.5, np.float32))
    quantized = {}

    def linear(x, p):
        if x not in quantized:  # one DynamicQuantizeLinear per activation (shared by Q, K, V)
            quantized[x] = g.op("DynamicQuantizeLinear", [x], 3)
        xq, xs, xzp = quantized[x]
        q, s = _quant_cols(np.asarray(w[p + ".weight"]).T)
        name = p.replace(".", "_")
        acc = g.op("MatMulInteger", [xq, g.init(name + "_q", q), xzp,
                                     g.init(name + "_zp", np.zeros(q.shape[1], np.int8))])
        f = g.op("Cast", [acc], to=TensorProto.FLOAT)
        y = g.op("Mul", [f, g.op("Mul", [xs, g.init(name + "_s", s)])])
        return g.op("Add", [y, g.init(name + "_b", np.asarray(w[p + ".bias"]))])

    def layernorm(x, p):
        name = p.replace(".", "_")
        return g.op("LayerNormalization", [x, g.init(name + "_g", np.asarray(w[p + ".weight"])),
                                           g.init(name + "_b", np.asarray(w[p + ".bias"]))],
                    axis=-1, epsilon=c["eps"])

    x = "x"
    for i in range(c["layers"]):
        p = f"encoder.layer.{i}."
        heads = lambda t, perm: g.op("Transpose", [g.op("Reshape", [t, heads_shape])], perm=perm)  # noqa: E731
        q = heads(linear(x, p + "attention.self.query"), [0, 2, 1, 3])
        kt = heads(linear(x, p + "attention.self.key"), [0, 2, 3, 1])
        v = heads(linear(x, p + "attention.self.value"), [0, 2, 1, 3])
        probs = g.op("Softmax", [g.op("Mul", [g.op("MatMul", [q, kt]), scale])], axis=-1)
        a = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]),
                             model_shape])
        x = layernorm(g.op("Add", [x, linear(a, p + "attention.output.dense")]),
                      p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        gelu = g.op("Mul", [g.op("Mul", [h, g.op("Add", [g.op("Erf", [g.op("Div", [h, sqrt2])]),
                                                         one])]), half])
        x = layernorm(g.op("Add", [x, linear(gelu, p + "output.dense")]), p + "output.LayerNorm")
    m = g.model("w1_int8_mmi", [("", 17)])
    onnx.checker.check_model(m)
    return m


def build_fused(w):
    c, g = W1, _Graph()
    H = c["heads"]

    def dqmm(x, p, bias=True):
        q, s = _quant_cols(np.asarray(w[p + ".weight"]).T)
        name = p.replace(".", "_")
        ins = [x, g.init(name + "_q", q), g.init(name + "_s", s),
               g.init(name + "_zp", np.zeros(q.shape[1], np.int8))]
        if bias:
            ins.append(g.init(name + "_b", np.asarray(w[p + ".bias"])))
        return g.op("DynamicQuantizeMatMul", ins, domain=MS)

    def skip_ln(x, skip, p_norm, p_bias):
        nm, nb = p_norm.replace(".", "_"), p_bias.replace(".", "_")
        return g.op("SkipLayerNormalization",
                    [x, skip, g.init(nm + "_g", np.asarray(w[p_norm + ".weight"])),
                     g.init(nm + "_b", np.asarray(w[p_norm + ".bias"])),
                     g.init(nb + "_bias", np.asarray(w[p_bias + ".bias"]))],
                    domain=MS, epsilon=c["eps"])

    x = "x"
    for i in range(c["layers"]):
        p = f"encoder.layer.{i}."
        names = [p + "attention.self." + n for n in ("query", "key", "value")]
        wqkv = np.concatenate([np.asarray(w[n + ".weight"]).T for n in names], axis=1)
        bqkv = np.concatenate([np.asarray(w[n + ".bias"]) for n in names])
        s_t = np.float32(np.abs(wqkv).max() / 127.0)  # QAttention: one weight scale per tensor
        xq, xs, xzp = g.op("DynamicQuantizeLinear", [x], 3)
        a = g.op("QAttention", [xq, g.init(f"l{i}_wqkv_q", np.clip(np.round(wqkv / s_t), -127, 127)
                                           .astype(np.int8)),
                                g.init(f"l{i}_bqkv", bqkv), xs,
                                g.init(f"l{i}_wqkv_s", np.array(s_t, np.float32)), "", xzp,
                                g.init(f"l{i}_wqkv_zp", np.array(0, np.int8))],
                 domain=MS, num_heads=H)
        o = dqmm(a, p + "attention.output.dense", bias=False)
        x = skip_ln(o, x, p + "attention.output.LayerNorm", p + "attention.output.dense")
        h = dqmm(x, p + "intermediate.dense", bias=False)
        name = (p + "intermediate.dense").replace(".", "_")
        gelu = g.op("BiasGelu", [h, g.init(name + "_bias", np.asarray(w[p + "intermediate.dense.bias"]))],
                    domain=MS)
        f = dqmm(gelu, p + "output.dense", bias=False)
        x = skip_ln(f, x, p + "output.LayerNorm", p + "output.dense")
    return g.model("w1_int8_fused", [("", 17), (MS, 1)])
