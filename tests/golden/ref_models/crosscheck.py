"""A second implementation of the BERT (and RoBERTa, DistilBERT), GPT-2 and Marian stacks on PyTorch's own
nn.TransformerEncoderLayer / nn.TransformerDecoderLayer, fed the same weights: catches wiring
mistakes (residuals, norm placement, head split, masks) in the reference models.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .common import gelu_tanh


def _mha(mha, wq, wk, wv, bq, bk, bv, wo, bo):
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat((wq, wk, wv)))  # [3E, E]
        mha.in_proj_bias.copy_(torch.cat((bq, bk, bv)))
        mha.out_proj.weight.copy_(wo)
        mha.out_proj.bias.copy_(bo)


def _copy(dst, weight, bias):
    with torch.no_grad():
        dst.weight.copy_(weight)
        dst.bias.copy_(bias)


def _causal(n):
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True = masked


def bert(model, c, ids, valid):
    layers = []
    for l in model.encoder.layer:
        t = nn.TransformerEncoderLayer(c["hidden_size"], c["num_attention_heads"],
                                       c["intermediate_size"], dropout=0.0, activation=F.gelu,
                                       layer_norm_eps=c["layer_norm_eps"], batch_first=True)
        a = l.attention.self
        _mha(t.self_attn, a.query.weight, a.key.weight, a.value.weight, a.query.bias,
             a.key.bias, a.value.bias, l.attention.output.dense.weight,
             l.attention.output.dense.bias)
        _copy(t.norm1, l.attention.output.LayerNorm.weight, l.attention.output.LayerNorm.bias)
        _copy(t.linear1, l.intermediate.dense.weight, l.intermediate.dense.bias)
        _copy(t.linear2, l.output.dense.weight, l.output.dense.bias)
        _copy(t.norm2, l.output.LayerNorm.weight, l.output.LayerNorm.bias)
        layers.append(t.eval())
    x = model.embeddings(ids)
    for t in layers:
        x = t(x, src_key_padding_mask=~valid)
    return x


roberta = bert  # the same layers; model.embeddings computes RoBERTa's positions
xlm_roberta = bert


def distilbert(model, c, ids, valid):
    act = {"gelu": F.gelu, "relu": F.relu}[c["activation"]]
    layers = []
    for l in model.transformer.layer:
        t = nn.TransformerEncoderLayer(c["dim"], c["n_heads"], c["hidden_dim"], dropout=0.0,
                                       activation=act, layer_norm_eps=1e-12, batch_first=True)
        a = l.attention
        _mha(t.self_attn, a.q_lin.weight, a.k_lin.weight, a.v_lin.weight, a.q_lin.bias,
             a.k_lin.bias, a.v_lin.bias, a.out_lin.weight, a.out_lin.bias)
        _copy(t.norm1, l.sa_layer_norm.weight, l.sa_layer_norm.bias)
        _copy(t.linear1, l.ffn.lin1.weight, l.ffn.lin1.bias)
        _copy(t.linear2, l.ffn.lin2.weight, l.ffn.lin2.bias)
        _copy(t.norm2, l.output_layer_norm.weight, l.output_layer_norm.bias)
        layers.append(t.eval())
    x = model.embeddings(ids)
    for t in layers:
        x = t(x, src_key_padding_mask=~valid)
    return x


def gpt2(model, c, ids, valid):
    tr, e = model.transformer, c["n_embd"]
    x = tr.wte(ids) + tr.wpe(torch.arange(ids.shape[1]))[None]
    for blk in tr.h:
        t = nn.TransformerEncoderLayer(e, c["n_head"], c.get("n_inner") or 4 * e, dropout=0.0,
                                       activation=gelu_tanh,
                                       layer_norm_eps=c.get("layer_norm_epsilon", 1e-5),
                                       batch_first=True, norm_first=True).eval()
        w, b = blk.attn.c_attn.weight.t(), blk.attn.c_attn.bias  # Conv1D [in, out] -> [out, in]
        _mha(t.self_attn, w[:e], w[e:2 * e], w[2 * e:], b[:e], b[e:2 * e], b[2 * e:],
             blk.attn.c_proj.weight.t(), blk.attn.c_proj.bias)
        _copy(t.norm1, blk.ln_1.weight, blk.ln_1.bias)
        _copy(t.norm2, blk.ln_2.weight, blk.ln_2.bias)
        _copy(t.linear1, blk.mlp.c_fc.weight.t(), blk.mlp.c_fc.bias)
        _copy(t.linear2, blk.mlp.c_proj.weight.t(), blk.mlp.c_proj.bias)
        x = t(x, src_mask=_causal(ids.shape[1]), src_key_padding_mask=~valid)
    return F.linear(tr.ln_f(x), tr.wte.weight)


def marian(model, c, ids, valid, dec_ids, dec_valid):
    d = c["d_model"]
    m = model.model
    scale = math.sqrt(d)

    def attn(mha, a):
        _mha(mha, a.q_proj.weight, a.k_proj.weight, a.v_proj.weight, a.q_proj.bias, a.k_proj.bias,
             a.v_proj.bias, a.out_proj.weight, a.out_proj.bias)

    x = m.shared(ids) * scale + m.encoder.embed_positions.weight[:ids.shape[1]][None]
    for l in m.encoder.layers:
        t = nn.TransformerEncoderLayer(d, c["encoder_attention_heads"], c["encoder_ffn_dim"],
                                       dropout=0.0, activation=F.silu, batch_first=True).eval()
        attn(t.self_attn, l.self_attn)
        _copy(t.norm1, l.self_attn_layer_norm.weight, l.self_attn_layer_norm.bias)
        _copy(t.linear1, l.fc1.weight, l.fc1.bias)
        _copy(t.linear2, l.fc2.weight, l.fc2.bias)
        _copy(t.norm2, l.final_layer_norm.weight, l.final_layer_norm.bias)
        x = t(x, src_key_padding_mask=~valid)
    y = m.shared(dec_ids) * scale + m.decoder.embed_positions.weight[:dec_ids.shape[1]][None]
    for l in m.decoder.layers:
        t = nn.TransformerDecoderLayer(d, c["decoder_attention_heads"], c["decoder_ffn_dim"],
                                       dropout=0.0, activation=F.silu, batch_first=True).eval()
        attn(t.self_attn, l.self_attn)
        attn(t.multihead_attn, l.encoder_attn)
        _copy(t.norm1, l.self_attn_layer_norm.weight, l.self_attn_layer_norm.bias)
        _copy(t.norm2, l.encoder_attn_layer_norm.weight, l.encoder_attn_layer_norm.bias)
        _copy(t.linear1, l.fc1.weight, l.fc1.bias)
        _copy(t.linear2, l.fc2.weight, l.fc2.bias)
        _copy(t.norm3, l.final_layer_norm.weight, l.final_layer_norm.bias)
        y = t(y, x, tgt_mask=_causal(dec_ids.shape[1]), tgt_key_padding_mask=~dec_valid,
              memory_key_padding_mask=~valid)
    return F.linear(y, m.shared.weight) + model.final_logits_bias
