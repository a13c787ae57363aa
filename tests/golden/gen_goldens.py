#!/usr/bin/python3
"""Writes the golden cases of tests/golden/cases: small random-weight checkpoints in Hugging Face
layout for every family octet imports, with the fp32 PyTorch outputs that `octet run --dump` must
reproduce.

    OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 tests/golden/gen_goldens.py --out tests/golden/cases
    ... --out DIR --seed 999           unseen checkpoints for acceptance runs
    ... --only gpt2_pad,t5_relu_tied   some cases only (a case's files depend on --seed only)

Needs Debian's python3-torch and python3-numpy (no transformers, no safetensors: the reference
models and the safetensors writer are in ref_models/). See README.md beside this file.
"""
import argparse
import json
import math
import os
import platform
import shutil
import sys
import zlib

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

from ref_models import crosscheck, safetensors_io  # noqa: E402
from ref_models.bert import BertModel  # noqa: E402
from ref_models.common import Conv1D, RMSNorm  # noqa: E402
from ref_models.distilbert import DistilBertModel, sinusoidal_table  # noqa: E402
from ref_models.gemma import GemmaForCausalLM, GemmaRMSNorm  # noqa: E402
from ref_models.gpt2 import GPT2LMHeadModel  # noqa: E402
from ref_models.lfm2 import Lfm2ForCausalLM  # noqa: E402
from ref_models.llama import LlamaForCausalLM  # noqa: E402
from ref_models.marian import MarianMTModel, MarianSinusoidalPositionalEmbedding  # noqa: E402
from ref_models.modernbert import ModernBertModel  # noqa: E402
from ref_models.phi3 import Phi3ForCausalLM  # noqa: E402
from ref_models.qwen3 import Qwen3ForCausalLM  # noqa: E402
from ref_models.qwen3_5 import Qwen3_5ForCausalLM, Qwen3_5GatedDeltaNet  # noqa: E402
from ref_models.roberta import RobertaModel  # noqa: E402
from ref_models.rwkv import RwkvFeedForward, RwkvForCausalLM, RwkvSelfAttention  # noqa: E402
from ref_models.t5 import T5ForConditionalGeneration, relative_position_bucket  # noqa: E402

SCRIPT = "tests/golden/gen_goldens.py"
TOLERANCE = 1e-5  # self-checks: max abs error <= TOLERANCE * max abs of the reference

MODELS = {
    "bert": BertModel,
    "gpt2": GPT2LMHeadModel,
    "llama": LlamaForCausalLM,
    "qwen2": LlamaForCausalLM,
    "mistral": LlamaForCausalLM,
    "qwen3": Qwen3ForCausalLM,
    "phi3": Phi3ForCausalLM,
    "gemma": GemmaForCausalLM,
    "gemma2": GemmaForCausalLM,
    "gemma3_text": GemmaForCausalLM,
    "marian": MarianMTModel,
    "t5": T5ForConditionalGeneration,
    "distilbert": DistilBertModel,
    "roberta": RobertaModel,
    "xlm-roberta": RobertaModel,
    "modernbert": ModernBertModel,
    "lfm2": Lfm2ForCausalLM,
    "qwen3_5_text": Qwen3_5ForCausalLM,
    "qwen3_5": Qwen3_5ForCausalLM,
    "rwkv": RwkvForCausalLM,
}

# --- the cases -----------------------------------------------------------------------------------
# config: the config.json written (the reference models read it, so both agree).
# layout: which Hugging Face class saved the checkpoint (names, prefixes, extra and dropped
# tensors).
# lengths / decoder_lengths: the batch, one entry per sequence.

CASES = [
    dict(
        name="bert_prefix",
        covers="BertForPreTraining layout: `bert.` prefix, pooler and cls.* heads and the I64 "
               "position_ids buffer to ignore; padded batch",
        layout="bert_pretraining", dtype="F32", lengths=[12, 7],
        config={
            "architectures": ["BertForPreTraining"], "model_type": "bert",
            "vocab_size": 128, "hidden_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 64, "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "max_position_embeddings": 64, "type_vocab_size": 2, "initializer_range": 0.02,
            "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "absolute",
            "torch_dtype": "float32", "use_cache": True,
        }),
    dict(
        name="bert_noprefix_f16",
        covers="BertModel layout (no prefix, pooler), F16 checkpoint, head_dim 16, eps 1e-7; "
               "the shorter sequence first",
        layout="bert_model", dtype="F16", lengths=[5, 9],
        config={
            "architectures": ["BertModel"], "model_type": "bert",
            "vocab_size": 150, "hidden_size": 48, "num_hidden_layers": 2,
            "num_attention_heads": 3, "intermediate_size": 80, "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "max_position_embeddings": 32, "type_vocab_size": 2, "initializer_range": 0.02,
            "layer_norm_eps": 1e-7, "pad_token_id": 0, "position_embedding_type": "absolute",
            "torch_dtype": "float16",
        }),
    dict(
        name="gpt2_pad",
        covers="GPT2LMHeadModel layout (`transformer.` prefix, tied head, attn.bias F32 "
               "[1,1,P,P] and 0-d attn.masked_bias to ignore), n_inner null, padded batch, "
               "tokenizer.json (byte-level BPE)",
        layout="gpt2_lmhead", dtype="F32", lengths=[11, 6], tokenizer=True,
        config={
            "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
            "vocab_size": 272, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 32,
            "n_ctx": 32, "n_inner": None, "activation_function": "gelu_new",
            "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
            "initializer_range": 0.02, "scale_attn_weights": True, "use_cache": True,
            "bos_token_id": 271, "eos_token_id": 271, "torch_dtype": "float32",
        }),
    dict(
        name="gpt2_long",
        covers="original GPT-2 layout (GPT2Model names: no `transformer.` prefix, no n_inner "
               "key), sequences of 100 and 73 tokens (several attention tiles)",
        layout="gpt2_model", dtype="F32", lengths=[100, 73],
        config={
            "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
            "vocab_size": 64, "n_embd": 32, "n_layer": 2, "n_head": 2, "n_positions": 112,
            "n_ctx": 112, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
            "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1, "initializer_range": 0.02,
            "bos_token_id": 63, "eos_token_id": 63,
        }),
    dict(
        name="llama_gqa_llama3",
        covers="Llama: GQA (4 heads, 2 KV heads), untied lm_head, rope_theta 500000, rope_scaling "
               "llama3 (factor 8, low 1, high 4, original 256: head_dim 8 puts one frequency in "
               "each regime), padded batch",
        layout="as_is", dtype="F32", lengths=[20, 9],
        config={
            "architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "vocab_size": 128, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 8, "hidden_act": "silu", "max_position_embeddings": 2048,
            "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 256},
            "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
            "pretraining_tp": 1, "bos_token_id": 1, "eos_token_id": 2, "initializer_range": 0.02,
            "use_cache": True, "torch_dtype": "float32",
        }),
    dict(
        name="llama_tied_linear_bf16",
        covers="Llama: tied head (no lm_head.weight), old-style rope_scaling {\"type\": "
               "\"linear\", factor 2}, MHA, BF16 checkpoint sharded into 2 files with "
               "model.safetensors.index.json",
        layout="as_is", dtype="BF16", shards=2, lengths=[10, 4],
        config={
            "architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "vocab_size": 96, "hidden_size": 32, "intermediate_size": 48,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
            "hidden_act": "silu", "max_position_embeddings": 256, "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0, "rope_scaling": {"type": "linear", "factor": 2.0},
            "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2,
            "initializer_range": 0.02, "torch_dtype": "bfloat16",
        }),
    dict(
        name="qwen2_bias",
        covers="Qwen2: q/k/v biases (o_proj none), GQA groups of 3 (6 heads, 2 KV heads), tied, "
               "rope_theta 1e6, sliding_window present but use_sliding_window false",
        layout="as_is", dtype="F32", lengths=[9, 14],
        config={
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
            "vocab_size": 128, "hidden_size": 48, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 2,
            "hidden_act": "silu", "max_position_embeddings": 128, "rms_norm_eps": 1e-6,
            "rope_theta": 1000000.0, "sliding_window": 128, "use_sliding_window": False,
            "max_window_layers": 2, "tie_word_embeddings": True, "bos_token_id": 126,
            "eos_token_id": 127, "attention_dropout": 0.0, "initializer_range": 0.02,
            "use_cache": True, "torch_dtype": "float32",
        }),
    dict(
        name="mistral_window",
        covers="Mistral: sliding_window 4 (a query sees itself and the 3 previous keys) on "
               "sequences of 12 and 9, GQA, untied",
        layout="as_is", dtype="F32", lengths=[12, 9],
        config={
            "architectures": ["MistralForCausalLM"], "model_type": "mistral",
            "vocab_size": 128, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "hidden_act": "silu", "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
            "rope_theta": 10000.0, "sliding_window": 4, "tie_word_embeddings": False,
            "bos_token_id": 1, "eos_token_id": 2, "initializer_range": 0.02,
            "torch_dtype": "float32",
        }),
    dict(
        name="mistral_long",
        covers="Mistral: 100 and 61 tokens with sliding_window 40 (whole tiles out of the "
               "window), MQA (4 heads, 1 KV head), explicit head_dim 16 != hidden/heads",
        layout="as_is", dtype="F32", lengths=[61, 100],
        config={
            "architectures": ["MistralForCausalLM"], "model_type": "mistral",
            "vocab_size": 64, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1,
            "head_dim": 16, "hidden_act": "silu", "max_position_embeddings": 1024,
            "rms_norm_eps": 1e-5, "rope_theta": 1000000.0, "sliding_window": 40,
            "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
            "initializer_range": 0.02, "torch_dtype": "float32",
        }),
    dict(
        name="gemma_mqa_f16",
        covers="Gemma: MQA (4 heads, 1 KV head), head_dim 16 != hidden/heads, (1 + w) norms, "
               "embeddings x sqrt(32), tied head on the unscaled table, hidden_act gelu with "
               "hidden_activation gelu_pytorch_tanh (the latter wins), F16, padded batch",
        layout="as_is", dtype="F16", lengths=[14, 9],
        config={
            "architectures": ["GemmaForCausalLM"], "model_type": "gemma",
            "vocab_size": 128, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1,
            "head_dim": 16, "hidden_act": "gelu", "hidden_activation": "gelu_pytorch_tanh",
            "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
            "attention_bias": False, "attention_dropout": 0.0, "pad_token_id": 0,
            "bos_token_id": 2, "eos_token_id": 1, "initializer_range": 0.02,
            "tie_word_embeddings": True, "use_cache": True, "torch_dtype": "float16",
        }),
    dict(
        name="gemma2_window",
        covers="Gemma 2: sandwich norms, 3 layers (sliding, global, sliding by the default rule) "
               "with sliding_window 6 on 20 and 13 tokens, query_pre_attn_scalar 2, attention "
               "soft-cap 5 and final soft-cap 3 on logits large enough that tanh bends, GQA, "
               "untied lm_head, BF16",
        layout="as_is", dtype="BF16", lengths=[20, 13],
        config={
            "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
            "vocab_size": 128, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 8, "hidden_activation": "gelu_pytorch_tanh",
            "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
            "query_pre_attn_scalar": 2, "attn_logit_softcapping": 5.0,
            "final_logit_softcapping": 3.0, "sliding_window": 6, "cache_implementation": "hybrid",
            "attention_bias": False, "attention_dropout": 0.0, "pad_token_id": 0,
            "bos_token_id": 2, "eos_token_id": 1, "initializer_range": 0.02,
            "tie_word_embeddings": False, "use_cache": True, "torch_dtype": "bfloat16",
        }),
    dict(
        name="gemma3_pattern",
        covers="Gemma 3 text: Q/K norms, sliding_window_pattern 3 over 3 layers (sliding, "
               "sliding, global) with sliding_window 5 on 18 and 11 tokens, rope_local_base_freq "
               "10000 on sliding layers and rope_theta 1e6 with linear rope_scaling (factor 4) "
               "on the global one, no soft-capping (the defaults), query_pre_attn_scalar 16, "
               "GQA, tied, BF16",
        layout="as_is", dtype="BF16", lengths=[18, 11],
        config={
            "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
            "vocab_size": 128, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 16, "hidden_activation": "gelu_pytorch_tanh",
            "max_position_embeddings": 1024, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
            "rope_local_base_freq": 10000.0,
            "rope_scaling": {"rope_type": "linear", "factor": 4.0},
            "query_pre_attn_scalar": 16, "sliding_window": 5, "sliding_window_pattern": 3,
            "attention_bias": False, "attention_dropout": 0.0, "pad_token_id": 0,
            "bos_token_id": 2, "eos_token_id": 1, "initializer_range": 0.02,
            "tie_word_embeddings": True, "use_cache": True, "torch_dtype": "bfloat16",
        }),
    dict(
        name="qwen3_gqa_tied",
        covers="Qwen3: Q/K RMSNorm per head before RoPE, GQA groups of 2 (4 heads, 2 KV heads), "
               "head_dim 16 != hidden/heads 8, tied head, rope_theta 1e6, sliding_window present "
               "but use_sliding_window false, padded batch",
        layout="as_is", dtype="F32", lengths=[13, 7],
        config={
            "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
            "vocab_size": 160, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 16, "hidden_act": "silu", "max_position_embeddings": 256,
            "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "rope_scaling": None,
            "attention_bias": False, "attention_dropout": 0.0, "use_sliding_window": False,
            "sliding_window": None, "max_window_layers": 2,
            "layer_types": ["full_attention", "full_attention"], "tie_word_embeddings": True,
            "bos_token_id": 158, "eos_token_id": 159, "initializer_range": 0.02,
            "use_cache": True, "torch_dtype": "float32",
        }),
    dict(
        name="qwen3_untied_bf16",
        covers="Qwen3: untied lm_head, attention_bias true (q/k/v/o biases), rope_scaling "
               "linear (factor 2), MHA (3 heads), head_dim 8 with hidden 32, eps 1e-5, 3 layers, "
               "BF16 checkpoint, the shorter sequence first",
        layout="as_is", dtype="BF16", lengths=[6, 11],
        config={
            "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
            "vocab_size": 96, "hidden_size": 32, "intermediate_size": 48,
            "num_hidden_layers": 3, "num_attention_heads": 3, "num_key_value_heads": 3,
            "head_dim": 8, "hidden_act": "silu", "max_position_embeddings": 128,
            "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
            "rope_scaling": {"rope_type": "linear", "factor": 2.0}, "attention_bias": True,
            "use_sliding_window": False, "sliding_window": 64, "max_window_layers": 3,
            "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
            "initializer_range": 0.02, "torch_dtype": "bfloat16",
        }),
    dict(
        name="phi3_fused",
        covers="Phi-3: fused qkv_proj (MHA, 2 heads x 16) and gate_up_proj split at conversion, "
               "partial_rotary_factor 0.5 (8 of 16 dimensions rotated), sliding_window 5 on "
               "sequences of 14 and 9, untied, padded batch",
        layout="as_is", dtype="F32", lengths=[14, 9],
        config={
            "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
            "vocab_size": 128, "hidden_size": 32, "intermediate_size": 48,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
            "hidden_act": "silu", "max_position_embeddings": 256,
            "original_max_position_embeddings": 256, "rms_norm_eps": 1e-5,
            "rope_theta": 10000.0, "rope_scaling": None, "partial_rotary_factor": 0.5,
            "sliding_window": 5, "tie_word_embeddings": False, "attention_dropout": 0.0,
            "embd_pdrop": 0.0, "resid_pdrop": 0.0, "bos_token_id": 1, "eos_token_id": 2,
            "pad_token_id": 0, "initializer_range": 0.02, "use_cache": True,
            "torch_dtype": "float32",
        }),
    dict(
        name="phi3_longrope_gqa_f16",
        covers="Phi-3: GQA (6 heads, 2 KV heads: qkv_proj rows 48 + 16 + 16), rope_scaling "
               "longrope with the short factors (22 positions, with 8 generated, within "
               "original_max_position_embeddings 32), attention_factor from 128 / 32, tied head, "
               "F16 checkpoint",
        layout="as_is", dtype="F16", lengths=[12, 7],
        config={
            "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
            "vocab_size": 112, "hidden_size": 48, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 2,
            "hidden_act": "silu", "max_position_embeddings": 128,
            "original_max_position_embeddings": 32, "rms_norm_eps": 1e-5,
            "rope_theta": 10000.0,
            "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.25, 2.5, 4.0],
                             "long_factor": [1.5, 3.0, 8.0, 20.0]},
            "sliding_window": None, "tie_word_embeddings": True, "bos_token_id": 1,
            "eos_token_id": 2, "pad_token_id": 0, "initializer_range": 0.02,
            "torch_dtype": "float16",
        }),
    dict(
        name="phi3_longrope_long",
        covers="Phi-3: rope_scaling longrope (rope_type, attention_factor given) past "
               "original_max_position_embeddings 8: sequences of 13 and 10 use the long factors; "
               "partial rotary 0.5, GQA, untied",
        layout="as_is", dtype="F32", lengths=[13, 10],
        config={
            "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
            "vocab_size": 96, "hidden_size": 32, "intermediate_size": 48,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "hidden_act": "silu", "max_position_embeddings": 64,
            "original_max_position_embeddings": 8, "rms_norm_eps": 1e-5,
            "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
            "rope_scaling": {"rope_type": "longrope", "short_factor": [1.0, 2.0],
                             "long_factor": [3.0, 9.0], "attention_factor": 1.1},
            "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
            "initializer_range": 0.02, "torch_dtype": "float32",
        }),
    dict(
        name="marian_pos",
        covers="MarianMTModel with every tensor saved: embed_positions (Marian sinusoids), "
               "encoder/decoder embed_tokens and lm_head.weight copies of model.shared; padded "
               "source and target batches",
        layout="marian_full", dtype="F32", lengths=[9, 5], decoder_lengths=[7, 4],
        config={
            "architectures": ["MarianMTModel"], "model_type": "marian",
            "vocab_size": 96, "decoder_vocab_size": 96, "d_model": 32,
            "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
            "decoder_attention_heads": 4, "encoder_ffn_dim": 48, "decoder_ffn_dim": 48,
            "max_position_embeddings": 64, "activation_function": "swish",
            "scale_embedding": True, "normalize_before": False, "normalize_embedding": False,
            "static_position_embeddings": True, "add_bias_logits": False,
            "share_encoder_decoder_embeddings": True, "is_encoder_decoder": True,
            "pad_token_id": 95, "eos_token_id": 0, "decoder_start_token_id": 95,
            "forced_eos_token_id": 0, "bad_words_ids": [[95]], "dropout": 0.1,
            "attention_dropout": 0.0, "activation_dropout": 0.0, "init_std": 0.02,
            "torch_dtype": "float32", "use_cache": True,
        }),
    dict(
        name="marian_nopos",
        covers="MarianMTModel saved without embed_positions (to compute) nor embed_tokens copies; "
               "2 encoder layers, 1 decoder layer; the shorter source first",
        layout="marian_minimal", dtype="F32", lengths=[6, 11], decoder_lengths=[5, 8],
        config={
            "architectures": ["MarianMTModel"], "model_type": "marian",
            "vocab_size": 100, "decoder_vocab_size": 100, "d_model": 32,
            "encoder_layers": 2, "decoder_layers": 1, "encoder_attention_heads": 2,
            "decoder_attention_heads": 2, "encoder_ffn_dim": 48, "decoder_ffn_dim": 48,
            "max_position_embeddings": 128, "activation_function": "swish",
            "scale_embedding": True, "normalize_before": False, "normalize_embedding": False,
            "static_position_embeddings": True, "add_bias_logits": False,
            "share_encoder_decoder_embeddings": True, "is_encoder_decoder": True,
            "pad_token_id": 99, "eos_token_id": 0, "decoder_start_token_id": 99,
            "forced_eos_token_id": 0, "bad_words_ids": [[99]], "dropout": 0.1,
            "attention_dropout": 0.0, "activation_dropout": 0.0, "init_std": 0.02,
            "torch_dtype": "float32", "use_cache": True,
        }),
    dict(
        name="t5_relu_tied",
        covers="T5 v1.0: ReLU FFN, head tied to shared and rescaled by d_model^-0.5, "
               "encoder/decoder embed_tokens copies saved; config in t5-small's style without "
               "feed_forward_proj, num_decoder_layers, tie_word_embeddings and "
               "relative_attention_max_distance (defaults relu, num_layers, true, 128)",
        layout="t5_full", dtype="F32", lengths=[12, 7], decoder_lengths=[6, 9],
        config={
            "architectures": ["T5ForConditionalGeneration"], "model_type": "t5",
            "vocab_size": 96, "d_model": 32, "d_kv": 8, "d_ff": 48, "num_layers": 2,
            "num_heads": 4, "relative_attention_num_buckets": 32, "dropout_rate": 0.1,
            "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0, "is_encoder_decoder": True,
            "n_positions": 512, "output_past": True, "pad_token_id": 0, "eos_token_id": 1,
            "decoder_start_token_id": 0,
        }),
    dict(
        name="t5_gated_untied",
        covers="T5 v1.1: gated-gelu FFN (tanh GELU), untied lm_head, 3 heads x d_kv 8 = 24 != "
               "d_model 32, 2 encoder / 3 decoder blocks, 8 buckets with max_distance 20 on "
               "sources of 24 tokens (log buckets and the clamp in both directions)",
        layout="t5_minimal", dtype="F32", lengths=[24, 15], decoder_lengths=[10, 16],
        config={
            "architectures": ["T5ForConditionalGeneration"], "model_type": "t5",
            "vocab_size": 128, "d_model": 32, "d_kv": 8, "d_ff": 48, "num_layers": 2,
            "num_decoder_layers": 3, "num_heads": 3, "relative_attention_num_buckets": 8,
            "relative_attention_max_distance": 20, "feed_forward_proj": "gated-gelu",
            "tie_word_embeddings": False, "dropout_rate": 0.1, "layer_norm_epsilon": 1e-6,
            "initializer_factor": 1.0, "is_encoder_decoder": True, "pad_token_id": 0,
            "eos_token_id": 1, "decoder_start_token_id": 0, "use_cache": True,
            "torch_dtype": "float32",
        }),
    dict(
        name="distilbert_prefix",
        covers="DistilBertForMaskedLM layout: `distilbert.` prefix, vocab_transform / "
               "vocab_layer_norm / vocab_projector.bias heads and the I64 position_ids to "
               "ignore; gelu, learned positions, padded batch",
        layout="distilbert_mlm", dtype="F32", lengths=[13, 6],
        config={
            "architectures": ["DistilBertForMaskedLM"], "model_type": "distilbert",
            "vocab_size": 120, "dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64,
            "activation": "gelu", "max_position_embeddings": 32, "sinusoidal_pos_embds": False,
            "dropout": 0.1, "attention_dropout": 0.1, "qa_dropout": 0.1,
            "seq_classif_dropout": 0.2, "initializer_range": 0.02, "pad_token_id": 0,
            "tie_weights_": True, "torch_dtype": "float32",
        }),
    dict(
        name="distilbert_sinusoidal_f16",
        covers="DistilBertModel layout (no prefix), sinusoidal_pos_embds (the stored table, "
               "checked against create_sinusoidal_embeddings), relu, F16, 3 heads of 16; the "
               "shorter sequence first",
        layout="as_is", dtype="F16", lengths=[7, 11],
        config={
            "architectures": ["DistilBertModel"], "model_type": "distilbert",
            "vocab_size": 90, "dim": 48, "n_layers": 2, "n_heads": 3, "hidden_dim": 80,
            "activation": "relu", "max_position_embeddings": 40, "sinusoidal_pos_embds": True,
            "dropout": 0.1, "attention_dropout": 0.1, "initializer_range": 0.02,
            "pad_token_id": 0, "torch_dtype": "float16",
        }),
    dict(
        name="roberta_pad",
        covers="RobertaForMaskedLM layout: `roberta.` prefix, lm_head.* and the I64 "
               "position_ids to ignore; positions from pad_token_id + 1 (position_offset 2); "
               "BF16; padded batch with the shorter sequence first",
        layout="roberta_mlm", dtype="BF16", lengths=[6, 14],
        config={
            "architectures": ["RobertaForMaskedLM"], "model_type": "roberta",
            "vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 64, "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "max_position_embeddings": 40, "type_vocab_size": 1, "initializer_range": 0.02,
            "layer_norm_eps": 1e-5, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
            "position_embedding_type": "absolute", "torch_dtype": "bfloat16",
            "use_cache": True,
        }),
    dict(
        name="xlmr_untyped",
        covers="XLMRobertaModel layout (no prefix, pooler to ignore), model_type xlm-roberta, "
               "type_vocab_size 1, 6 heads of 8, 3 layers; a sequence of 24 = the whole table "
               "(26 rows - position_offset 2)",
        layout="roberta_model", dtype="F32", lengths=[24, 9],
        config={
            "architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta",
            "vocab_size": 160, "hidden_size": 48, "num_hidden_layers": 3,
            "num_attention_heads": 6, "intermediate_size": 96, "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "max_position_embeddings": 26, "type_vocab_size": 1, "initializer_range": 0.02,
            "layer_norm_eps": 1e-5, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
            "position_embedding_type": "absolute", "torch_dtype": "float32",
        }),
    dict(
        name="modernbert_mlm",
        covers="ModernBertForMaskedLM layout (`model.` prefix; head.* and decoder.bias to "
               "ignore, decoder.weight tied), the original config style: "
               "global_attn_every_n_layers 3 over 4 layers (global, local, local, global), "
               "local_attention 8 (|i - j| <= 4) on 20 and 13 tokens, global_rope_theta 160000 "
               "and local_rope_theta 10000, LayerNorms without bias, layer 0 without attn_norm, "
               "GeGLU (exact GELU)",
        layout="modernbert_mlm", dtype="F32", lengths=[20, 13],
        config={
            "architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert",
            "vocab_size": 96, "hidden_size": 32, "intermediate_size": 48,
            "num_hidden_layers": 4, "num_attention_heads": 4, "hidden_activation": "gelu",
            "max_position_embeddings": 64, "norm_eps": 1e-5, "layer_norm_eps": 1e-5,
            "norm_bias": False, "attention_bias": False, "mlp_bias": False,
            "global_attn_every_n_layers": 3, "local_attention": 8,
            "global_rope_theta": 160000.0, "local_rope_theta": 10000.0,
            "classifier_pooling": "mean", "classifier_activation": "gelu", "decoder_bias": True,
            "tie_word_embeddings": True, "pad_token_id": 93, "bos_token_id": 94,
            "eos_token_id": 95, "cls_token_id": 94, "sep_token_id": 95,
            "initializer_range": 0.02, "torch_dtype": "float32",
        }),
    dict(
        name="modernbert_types_bf16",
        covers="ModernBertModel layout (no prefix), the newer config style: explicit layer_types "
               "(local, global, local) and rope_parameters per kind (thetas 1000 and 50000), "
               "local_attention 6 (|i - j| <= 3) on 16 and 9 tokens, norm_bias and "
               "attention_bias (LayerNorm, Wqkv and Wo biases), BF16",
        layout="as_is", dtype="BF16", lengths=[16, 9],
        config={
            "architectures": ["ModernBertModel"], "model_type": "modernbert",
            "vocab_size": 80, "hidden_size": 48, "intermediate_size": 40,
            "num_hidden_layers": 3, "num_attention_heads": 3, "hidden_activation": "gelu",
            "max_position_embeddings": 32, "norm_eps": 1e-6, "norm_bias": True,
            "attention_bias": True, "mlp_bias": False, "local_attention": 6,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
            "rope_parameters": {
                "full_attention": {"rope_type": "default", "rope_theta": 50000.0},
                "sliding_attention": {"rope_type": "default", "rope_theta": 1000.0}},
            "tie_word_embeddings": True, "pad_token_id": 0, "initializer_range": 0.02,
            "torch_dtype": "bfloat16",
        }),
    dict(
        name="lfm2_hybrid",
        covers="LFM2: gated short convolutions (3 taps) in layers 0, 1, 3 and attention with "
               "Q/K RMSNorm per head in layers 2, 4 (layer_types), GQA (4 heads, 2 KV heads, "
               "head_dim 8), rope_parameters theta 1e6, block_ff_dim 96 auto-adjusted to 64, "
               "tie_embedding, embedding_norm as the final norm, padded batch",
        layout="as_is", dtype="F32", lengths=[13, 7],
        config={
            "architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2",
            "vocab_size": 128, "hidden_size": 32, "intermediate_size": 96, "block_ff_dim": 96,
            "block_auto_adjust_ff_dim": True, "block_multiple_of": 16,
            "block_ffn_dim_multiplier": 1.0, "num_hidden_layers": 5,
            "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512,
            "norm_eps": 1e-5, "conv_L_cache": 3, "conv_bias": False,
            "layer_types": ["conv", "conv", "full_attention", "conv", "full_attention"],
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
            "tie_embedding": True, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 7,
            "initializer_range": 0.02, "use_cache": True, "torch_dtype": "float32",
        }),
    dict(
        name="lfm2_idxs_bf16",
        covers="LFM2 (older config keys): full_attn_idxs [1] of 3 layers, conv_bias (in_proj, "
               "conv, out_proj biases), 4 taps, theta 10000, MHA (2 heads of 16), "
               "intermediate_size 48 with block_auto_adjust_ff_dim false, untied head "
               "(tie_embedding false), BF16, the shorter sequence first",
        layout="as_is", dtype="BF16", lengths=[6, 11],
        config={
            "architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2",
            "vocab_size": 96, "hidden_size": 32, "intermediate_size": 48,
            "block_auto_adjust_ff_dim": False, "num_hidden_layers": 3,
            "num_attention_heads": 2, "num_key_value_heads": 2, "max_position_embeddings": 256,
            "norm_eps": 1e-5, "conv_L_cache": 4, "conv_bias": True, "full_attn_idxs": [1],
            "theta": 10000.0, "tie_embedding": False, "pad_token_id": 0, "bos_token_id": 1,
            "eos_token_id": 2, "initializer_range": 0.02, "torch_dtype": "bfloat16",
        }),
    dict(
        name="qwen3_5_hybrid",
        covers="Qwen3.5 text (Qwen3_5ForCausalLM): Gated DeltaNet layers 0, 1, 3 (2 key heads of 8, "
               "4 value heads of 8: each key head shared by 2 value heads, conv of 4 taps) and gated "
               "full attention in layer 2 (output gate interleaved per head in q_proj, zero-centred "
               "Q/K norms, partial RoPE over 4 of 16 dimensions, GQA 4/2); sequences of 150 and 70 "
               "tokens cross the 64-token chunks; untied head",
        layout="as_is", dtype="F32", lengths=[150, 70],
        config={
            "architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text",
            "vocab_size": 96, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 16, "hidden_act": "silu", "max_position_embeddings": 512,
            "rms_norm_eps": 1e-6,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000000.0,
                                "partial_rotary_factor": 0.25},
            "layer_types": ["linear_attention", "linear_attention", "full_attention",
                            "linear_attention"],
            "linear_conv_kernel_dim": 4, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
            "linear_num_key_heads": 2, "linear_num_value_heads": 4, "attn_output_gate": True,
            "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
            "torch_dtype": "float32",
        }),
    dict(
        name="qwen3_5_multimodal_bf16",
        covers="Qwen3_5ForConditionalGeneration as published: text_config nested, "
               "model.language_model.* names, a vision tower (model.visual.*) and mtp.* to skip, "
               "full_attention_interval 2 over 4 layers, key and value heads alike (2 of 16), "
               "M-RoPE keys (mrope_section) on text only, tied head, BF16; 130 and 70 tokens",
        layout="qwen3_5_multimodal", dtype="BF16", lengths=[70, 130],
        config={
            "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
            "tie_word_embeddings": True, "image_token_id": 90, "video_token_id": 91,
            "text_config": {
                "model_type": "qwen3_5_text", "vocab_size": 96, "hidden_size": 32,
                "intermediate_size": 48, "num_hidden_layers": 4, "num_attention_heads": 2,
                "num_key_value_heads": 1, "head_dim": 16, "hidden_act": "silu",
                "max_position_embeddings": 512, "rms_norm_eps": 1e-6,
                "rope_parameters": {"rope_type": "default", "rope_theta": 10000000.0,
                                    "partial_rotary_factor": 0.25, "mrope_section": [1, 1, 0],
                                    "mrope_interleaved": True},
                "full_attention_interval": 2, "linear_conv_kernel_dim": 4,
                "linear_key_head_dim": 16, "linear_value_head_dim": 16,
                "linear_num_key_heads": 2, "linear_num_value_heads": 2,
                "attn_output_gate": True, "mtp_num_hidden_layers": 1,
                "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2,
            },
            "vision_config": {"model_type": "qwen3_5", "depth": 1, "hidden_size": 16},
            "torch_dtype": "bfloat16",
        }),
    dict(
        name="rwkv_rescale",
        covers="RWKV-4 (RwkvForCausalLM): 5 blocks with rescale_every 2 (the stream halved after "
               "blocks 1 and 3: norm epsilons x1, x4, x16 and ln_out's x16), a small stream "
               "(pre_ln, output and value x 0.1) so that the epsilons matter, pre_ln on the "
               "embeddings, intermediate_size null (4 x hidden), attention_hidden_size null, "
               "untied head; sequences of 150 and 70 tokens",
        layout="rwkv_lm", dtype="F32", lengths=[150, 70], continuation=8,
        config={
            "architectures": ["RwkvForCausalLM"], "model_type": "rwkv",
            "vocab_size": 96, "hidden_size": 32, "num_hidden_layers": 5,
            "attention_hidden_size": None, "intermediate_size": None, "context_length": 256,
            "layer_norm_epsilon": 1e-5, "rescale_every": 2, "bos_token_id": 0,
            "eos_token_id": 0, "tie_word_embeddings": False, "use_cache": True,
            "torch_dtype": "float32",
        }),
    dict(
        name="rwkv_bf16",
        covers="RWKV-4, BF16 checkpoint with time_decay and time_first in F32 (transformers keeps "
               "them in float32), 3 blocks with rescale_every 1 (epsilons x1, x4, x16, ln_out's "
               "x64), intermediate_size 48, layer_norm_epsilon 1e-6, untied head; the shorter "
               "sequence first",
        layout="rwkv_lm", dtype="BF16", lengths=[11, 37], continuation=8,
        config={
            "architectures": ["RwkvForCausalLM"], "model_type": "rwkv",
            "vocab_size": 80, "hidden_size": 32, "num_hidden_layers": 3,
            "attention_hidden_size": 32, "intermediate_size": 48, "context_length": 128,
            "layer_norm_epsilon": 1e-6, "rescale_every": 1, "bos_token_id": 0,
            "eos_token_id": 0, "tie_word_embeddings": False, "use_cache": True,
            "torch_dtype": "bfloat16",
        }),
]

# Standard deviation of the random embeddings per family (other weights: see init_weights).
EMBED_STD = {"bert": 1.0, "gpt2": 0.5, "llama": 1.0, "qwen2": 1.0, "mistral": 1.0,
             "qwen3": 1.0, "phi3": 1.0, "marian": 32 ** -0.5, "t5": 1.0, "distilbert": 1.0,
             "roberta": 1.0, "xlm-roberta": 1.0, "gemma": 1.0, "gemma2": 1.0, "gemma3_text": 1.0,
             "modernbert": 1.0, "lfm2": 1.0, "qwen3_5_text": 1.0, "qwen3_5": 1.0, "rwkv": 1.0}


def family(case):
    return case["config"]["model_type"]


def lm_config(case):
    """The language model's keys (a multimodal wrapper's text_config)."""
    return case["config"].get("text_config", case["config"])


def case_seed(seed, name):
    return (seed * 1000003 + zlib.crc32(name.encode())) % (2 ** 31)


# --- random weights ------------------------------------------------------------------------------

def init_weights(model, gen, embed_std, query_std_factor=1.0):
    """Deterministic random weights that keep activations O(1): linear N(0, 1/fan_in), biases
    N(0, 0.1^2), norm weights 1 + N(0, 0.1^2), embeddings N(0, embed_std^2), T5's relative bias and
    Marian's final_logits_bias N(0, 0.5^2). Marian's sinusoids stay as computed. Gemma's norms,
    which scale by 1 + weight: weight N(0, 0.1^2).
    query_std_factor multiplies the std of attention query projections (modules named "q"): T5
    does not scale its logits by 1/sqrt(d_kv) and its published initialisation puts that factor
    into the query weights instead (std (d_model * d_kv)^-0.5), which keeps the logits O(1)."""
    def randn(*shape, std=1.0):
        return torch.randn(*shape, generator=gen) * std

    with torch.no_grad():
        for name, m in model.named_modules():
            if isinstance(m, nn.Linear):
                std = m.weight.shape[1] ** -0.5
                if name.split(".")[-1] == "q":
                    std *= query_std_factor
                m.weight.copy_(randn(*m.weight.shape, std=std))
                if m.bias is not None:
                    m.bias.copy_(randn(*m.bias.shape, std=0.1))
            elif isinstance(m, nn.Conv1d):  # depthwise: fan-in = the taps
                m.weight.copy_(randn(*m.weight.shape, std=m.weight.shape[2] ** -0.5))
                if m.bias is not None:
                    m.bias.copy_(randn(*m.bias.shape, std=0.1))
            elif isinstance(m, Conv1D):
                m.weight.copy_(randn(*m.weight.shape, std=m.weight.shape[0] ** -0.5))
                m.bias.copy_(randn(*m.bias.shape, std=0.1))
            elif isinstance(m, GemmaRMSNorm):  # scales by 1 + weight
                m.weight.copy_(randn(*m.weight.shape, std=0.1))
            elif isinstance(m, (nn.LayerNorm, RMSNorm)):
                m.weight.copy_(1.0 + randn(*m.weight.shape, std=0.1))
                if getattr(m, "bias", None) is not None:
                    m.bias.copy_(randn(*m.bias.shape, std=0.1))
            elif isinstance(m, nn.Embedding):
                std = 0.5 if name.endswith("relative_attention_bias") else embed_std
                m.weight.copy_(randn(*m.weight.shape, std=std))
            elif isinstance(m, MarianSinusoidalPositionalEmbedding):
                pass
        if hasattr(model, "final_logits_bias"):
            model.final_logits_bias.copy_(randn(*model.final_logits_bias.shape, std=0.5))
        shape_delta_rules(model, KEY_QUERY_ALIGNMENT, VALUE_SCALE)
        shape_rwkv(model, gen, RWKV_STREAM_SCALE)


# Gated DeltaNet layers read their state with the query: o_t = S_t^T q_t, a sum over past tokens
# of v_s weighted by products of k_s and q_t, then y = RMSNorm(o_t) * silu(z) per head, eps 1e-6.
# With every weight drawn independently, o_t is O(0.1) and now and then a near-cancelling sum
# (rms 1e-3 at one position in a thousand), which the RMSNorm divides by: the random model is
# chaotic there (in torch, 0.5% noise on its embeddings alone moved a position's logits to cosine
# 0.993). Trained layers are not like that: models/qwen3_5-tiny (trained on the novels) has rms(o)
# 0.0006-0.0018 at the median of its four Gated DeltaNets, where the norm's eps (1e-6 against
# ms(o) ~1e-6) keeps y proportional to o, and its keys are aligned with the queries that read
# them. So the goldens' value rows of in_proj_qkv are scaled by VALUE_SCALE (o's median rms
# ~1e-3 like the trained model's), and the key half of in_proj_qkv and of the conv taps is drawn
# as a * (the query half) + sqrt(1 - a^2) * (independent): the same variance, correlated with q.
KEY_QUERY_ALIGNMENT = 0.9
VALUE_SCALE = 0.01


def shape_delta_rules(model, a, value_scale):
    for m in model.modules():
        if isinstance(m, Qwen3_5GatedDeltaNet):
            kd = m.key_dim
            for w in (m.in_proj_qkv.weight, m.conv1d.weight):
                w[kd:2 * kd] = a * w[:kd] + math.sqrt(1.0 - a * a) * w[kd:2 * kd]
            m.in_proj_qkv.weight[2 * kd:] *= value_scale


# RWKV's mixes and decays are parameters of their own (init_weights leaves them at 0): drawn
# around the values RwkvPreTrainedModel._init_weights gives them (mixes in [0, 1], decay
# speeds from -5 to 3: w = -exp(decay) from -0.007, a long memory, to -20, none; the bonus
# around log(0.3)), with noise. The residual stream is kept small (pre_ln's weight and bias,
# attention.output and feed_forward.value scaled by RWKV_STREAM_SCALE): the rescaling's
# norm epsilons then move the outputs well past the goldens' tolerance, so a wrong epsilon
# shows.
RWKV_STREAM_SCALE = 0.1


def shape_rwkv(model, gen, stream_scale):
    def rand(*shape):
        return torch.rand(*shape, generator=gen)

    for name, m in model.named_modules():
        if isinstance(m, RwkvSelfAttention):
            h = m.time_decay.shape[0]
            speed = torch.tensor([-5 + 8 * (i / (h - 1)) ** 1.5 for i in range(h)])
            m.time_decay.copy_(speed + 0.3 * torch.randn(h, generator=gen))
            zigzag = torch.tensor([((i + 1) % 3 - 1) * 0.5 for i in range(h)])
            m.time_first.copy_(math.log(0.3) + zigzag + 0.3 * torch.randn(h, generator=gen))
            for p in (m.time_mix_key, m.time_mix_value, m.time_mix_receptance):
                p.copy_(rand(*p.shape))
            m.output.weight.mul_(stream_scale)
        elif isinstance(m, RwkvFeedForward):
            for p in (m.time_mix_key, m.time_mix_receptance):
                p.copy_(rand(*p.shape))
            m.value.weight.mul_(stream_scale)
        elif name.endswith("pre_ln"):
            m.weight.mul_(stream_scale)
            m.bias.mul_(stream_scale)


# --- checkpoint layouts --------------------------------------------------------------------------
# export: model state_dict -> the tensors Hugging Face would save for that class.
# import_: what the converter must do in reverse: read those names back into the model.

def export(model, case, gen):
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    layout = case["layout"]
    c = case["config"]
    extra_dtype = {}

    def randn(*shape, std):
        return torch.randn(*shape, generator=gen) * std

    if layout in ("bert_model", "bert_pretraining"):
        h, v = c["hidden_size"], c["vocab_size"]
        sd["pooler.dense.weight"] = randn(h, h, std=h ** -0.5)
        sd["pooler.dense.bias"] = randn(h, std=0.1)
    if layout == "bert_pretraining":
        out = {"bert." + k: t for k, t in sd.items()}
        out["bert.embeddings.position_ids"] = torch.arange(c["max_position_embeddings"])[None]
        extra_dtype["bert.embeddings.position_ids"] = "I64"
        # BertForPreTraining heads (cls.predictions.decoder.weight is tied to the word embeddings
        # and not saved).
        out["cls.predictions.bias"] = randn(v, std=0.1)
        out["cls.predictions.transform.dense.weight"] = randn(h, h, std=h ** -0.5)
        out["cls.predictions.transform.dense.bias"] = randn(h, std=0.1)
        out["cls.predictions.transform.LayerNorm.weight"] = 1 + randn(h, std=0.1)
        out["cls.predictions.transform.LayerNorm.bias"] = randn(h, std=0.1)
        out["cls.seq_relationship.weight"] = randn(2, h, std=h ** -0.5)
        out["cls.seq_relationship.bias"] = randn(2, std=0.1)
    elif layout == "distilbert_mlm":
        # DistilBertForMaskedLM; vocab_projector.weight is tied to the word embeddings and not
        # saved.
        h, v = c["dim"], c["vocab_size"]
        out = {"distilbert." + k: t for k, t in sd.items()}
        out["distilbert.embeddings.position_ids"] = torch.arange(c["max_position_embeddings"])[None]
        extra_dtype["distilbert.embeddings.position_ids"] = "I64"
        out["vocab_transform.weight"] = randn(h, h, std=h ** -0.5)
        out["vocab_transform.bias"] = randn(h, std=0.1)
        out["vocab_layer_norm.weight"] = 1 + randn(h, std=0.1)
        out["vocab_layer_norm.bias"] = randn(h, std=0.1)
        out["vocab_projector.bias"] = randn(v, std=0.1)
    elif layout == "roberta_mlm":
        # RobertaForMaskedLM (no pooler); lm_head.decoder.weight is tied to the word embeddings
        # and lm_head.decoder.bias to lm_head.bias: neither is saved.
        h, v = c["hidden_size"], c["vocab_size"]
        out = {"roberta." + k: t for k, t in sd.items()}
        out["roberta.embeddings.position_ids"] = torch.arange(c["max_position_embeddings"])[None]
        extra_dtype["roberta.embeddings.position_ids"] = "I64"
        out["lm_head.dense.weight"] = randn(h, h, std=h ** -0.5)
        out["lm_head.dense.bias"] = randn(h, std=0.1)
        out["lm_head.layer_norm.weight"] = 1 + randn(h, std=0.1)
        out["lm_head.layer_norm.bias"] = randn(h, std=0.1)
        out["lm_head.bias"] = randn(v, std=0.1)
    elif layout == "roberta_model":
        h = c["hidden_size"]
        out = dict(sd)
        out["pooler.dense.weight"] = randn(h, h, std=h ** -0.5)
        out["pooler.dense.bias"] = randn(h, std=0.1)
    elif layout == "modernbert_mlm":
        # ModernBertForMaskedLM: decoder.weight is tied to the token embeddings and not saved.
        h, v = c["hidden_size"], c["vocab_size"]
        out = {"model." + k: t for k, t in sd.items()}
        out["head.dense.weight"] = randn(h, h, std=h ** -0.5)
        out["head.norm.weight"] = 1 + randn(h, std=0.1)
        out["decoder.bias"] = randn(v, std=0.1)
    elif layout == "qwen3_5_multimodal":
        # Qwen3_5ForConditionalGeneration: the language model under model.language_model., a
        # vision tower and the multi-token-prediction layer, both of which octet skips.
        h = c["text_config"]["hidden_size"]
        out = {}
        for k, t in sd.items():
            out[("model.language_model." + k[len("model."):]) if k.startswith("model.") else k] = t
        out["model.visual.patch_embed.proj.weight"] = randn(16, 3, 2, 4, 4, std=0.1)
        out["model.visual.blocks.0.attn.qkv.weight"] = randn(48, 16, std=0.25)
        out["model.visual.merger.linear_fc1.weight"] = randn(32, 64, std=0.125)
        out["mtp.fc.weight"] = randn(h, 2 * h, std=(2 * h) ** -0.5)
        out["mtp.norm.weight"] = randn(h, std=0.1)
    elif layout == "rwkv_lm":
        # RwkvForCausalLM; transformers keeps time_decay and time_first in float32
        # (_keep_in_fp32_modules), so a 16-bit checkpoint saves them in F32.
        out = dict(sd)
        for k in out:
            if k.endswith((".time_decay", ".time_first")):
                extra_dtype[k] = "F32"
    elif layout == "gpt2_model":
        out = {k[len("transformer."):]: t for k, t in sd.items()}
    elif layout == "marian_full":
        out = dict(sd)
        out["lm_head.weight"] = sd["model.shared.weight"].clone()
    elif layout == "marian_minimal":
        drop = ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight",
                "model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")
        out = {k: t for k, t in sd.items() if k not in drop}
    elif layout == "t5_minimal":
        drop = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")
        out = {k: t for k, t in sd.items() if k not in drop}
    else:  # bert_model, gpt2_lmhead, t5_full, as_is: the model's own names
        out = sd
    dtypes = {k: extra_dtype.get(k, case["dtype"]) for k in out}
    return out, dtypes


def import_(model, tensors, case):
    """Checkpoint names -> model names, skipping what octet does not use and filling tied copies,
    as the converter has to. Returns (state_dict, ignored checkpoint names)."""
    fam = family(case)
    sd, ignored = {}, []
    for name, t in tensors.items():
        key = name
        if fam == "bert":
            key = name[len("bert."):] if name.startswith("bert.") else name
            if key.startswith(("cls.", "pooler.")) or key == "embeddings.position_ids":
                ignored.append(name)
                continue
        elif fam == "distilbert":
            key = name[len("distilbert."):] if name.startswith("distilbert.") else name
            if key.startswith(("vocab_transform.", "vocab_layer_norm.", "vocab_projector.")) \
                    or key == "embeddings.position_ids":
                ignored.append(name)
                continue
        elif fam in ("roberta", "xlm-roberta"):
            key = name[len("roberta."):] if name.startswith("roberta.") else name
            if key.startswith(("lm_head.", "pooler.")) or key == "embeddings.position_ids":
                ignored.append(name)
                continue
        elif fam == "qwen3_5" and case["layout"] == "qwen3_5_multimodal":
            if name.startswith(("model.visual.", "mtp.")):
                ignored.append(name)
                continue
            key = name.replace("model.language_model.", "model.", 1)
        elif fam == "modernbert":
            key = name[len("model."):] if name.startswith("model.") else name
            if key.startswith(("head.", "decoder.", "classifier.")):
                ignored.append(name)
                continue
        elif fam == "gpt2":
            key = name if name.startswith("transformer.") else "transformer." + name
            if name.endswith((".attn.bias", ".attn.masked_bias")):
                ignored.append(name)  # still loaded: the reference model registers them
        elif fam == "marian" and name == "lm_head.weight":
            if not torch.equal(t, tensors["model.shared.weight"]):
                raise ValueError("lm_head.weight differs from model.shared.weight")
            ignored.append(name)
            continue
        sd[key] = t
    own = model.state_dict()
    for key in own:
        if key in sd:
            continue
        if key.endswith("embed_tokens.weight"):
            sd[key] = sd["model.shared.weight" if fam == "marian" else "shared.weight"]
        elif key.endswith("embed_positions.weight"):
            sd[key] = own[key]  # computed sinusoids
    return sd, sorted(ignored)


# --- files ---------------------------------------------------------------------------------------

def write_checkpoint(out_dir, tensors, dtypes, shards):
    """Writes model.safetensors, or `shards` files + model.safetensors.index.json. Returns the
    list of files."""
    named = {k: (tensors[k], dtypes[k]) for k in tensors}
    if shards == 1:
        safetensors_io.write(os.path.join(out_dir, "model.safetensors"), named)
        return ["model.safetensors"]
    names = list(tensors)  # module order, as Hugging Face shards
    sizes = [tensors[n].numel() * safetensors_io.DTYPES[dtypes[n]][1] for n in names]
    total, groups, acc = sum(sizes), [[] for _ in range(shards)], 0
    for n, s in zip(names, sizes):
        groups[min(shards - 1, acc * shards // total)].append(n)
        acc += s
    files, weight_map = [], {}
    for i, group in enumerate(groups):
        fname = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        safetensors_io.write(os.path.join(out_dir, fname), {n: named[n] for n in group})
        files.append(fname)
        weight_map.update({n: fname for n in group})
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    write_json(os.path.join(out_dir, "model.safetensors.index.json"), index)
    return files + ["model.safetensors.index.json"]


def read_checkpoint(out_dir):
    index = os.path.join(out_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    out = {}
    for fname in files:
        tensors, _ = safetensors_io.read(os.path.join(out_dir, fname))
        out.update(tensors)
    return out


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")


def bytes_to_unicode():
    """GPT-2's byte-level alphabet: printable bytes map to themselves, the others to U+0100 on."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}, bs


def write_tokenizer(out_dir, vocab_size):
    """A tiny byte-level BPE tokenizer.json: 256 byte tokens (GPT-2's order), 15 merges, and
    <|endoftext|> as the last id."""
    byte_char, order = bytes_to_unicode()
    vocab = {byte_char[b]: i for i, b in enumerate(order)}
    merges = ["Ġ t", "h e", "i n", "Ġ a", "e r", "o n", "Ġt he", "r e", "Ġ s", "a t", "o r",
              "e n", "Ġ o", "e s", "Ġ w"]
    for m in merges:
        vocab[m.replace(" ", "")] = len(vocab)
    eos = len(vocab)
    vocab["<|endoftext|>"] = eos
    if eos + 1 != vocab_size:
        raise ValueError("tokenizer and vocab_size disagree")

    def byte_level(prefix_space, trim):
        return {"type": "ByteLevel", "add_prefix_space": prefix_space, "trim_offsets": trim,
                "use_regex": True}
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eos, "content": "<|endoftext|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": True, "special": True}],
        "normalizer": None, "pre_tokenizer": byte_level(False, True),
        "post_processor": byte_level(True, False), "decoder": byte_level(True, True),
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "vocab": vocab, "merges": merges},
    }
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=2)
        f.write("\n")


# --- inputs --------------------------------------------------------------------------------------

def make_inputs(case, gen):
    """Token ids per sequence, in range, with the boundary ids where the family allows them."""
    c, fam = lm_config(case), family(case)
    v = c["vocab_size"]

    def rand(n, lo, hi):
        return torch.randint(lo, hi, (n,), generator=gen).tolist()

    ids, dec = [], None
    if fam in ("marian", "t5"):
        eos, start = c["eos_token_id"], c["decoder_start_token_id"]
        lo, hi = (1, v - 1) if fam == "marian" else (2, v)  # no pad/eos inside a sequence
        ids = [rand(n - 1, lo, hi) + [eos] for n in case["lengths"]]
        dec = [[start] + rand(n - 1, lo, hi) for n in case["decoder_lengths"]]
        ids[0][0], dec[0][-1] = hi - 1, lo  # the largest and smallest ordinary ids
    else:
        # RoBERTa: no pad id (1) inside a sequence (transformers would give it the padding
        # position); 2 is </s>, an ordinary id for the encoder.
        lo = {"bert": 1, "distilbert": 1, "roberta": 2, "xlm-roberta": 2}.get(fam, 0)
        ids = [rand(n, lo, v) for n in case["lengths"]]
        ids[0][1], ids[0][2] = v - 1, lo
    return ids, dec


def pad(seqs, value):
    n = max(len(s) for s in seqs)
    ids = torch.tensor([s + [value] * (n - len(s)) for s in seqs], dtype=torch.long)
    valid = torch.tensor([[True] * len(s) + [False] * (n - len(s)) for s in seqs])
    return ids, valid


# --- reference runs and self-checks --------------------------------------------------------------

def run(model, ids, dec=None, pad_id=0):
    """The DESIGN §5 --dump array for a batch, padded positions zeroed: [B, S, X]."""
    x, valid = pad(ids, pad_id)
    if model.kind in ("encoder", "decoder"):
        out, out_valid = model(x, valid), valid
    else:
        y, y_valid = pad(dec, pad_id)
        out, out_valid = model.decode(y, y_valid, model.encode(x, valid), valid), y_valid
    return out * out_valid[..., None]


def rel_err(a, b):
    return float((a - b).abs().max() / b.abs().max())


def run_incremental(model, ids, dec=None, prefill=1):
    """One unpadded sequence through the KV cache: `prefill` tokens, then one per step."""
    cache = model.new_cache()
    steps = dec if dec is not None else ids
    cache.planned = len(steps)  # the positions a session plans for (phi3's LongRope)
    if dec is not None:
        x = torch.tensor([ids])
        x_valid = torch.ones_like(x, dtype=torch.bool)
        enc = model.encode(x, x_valid)
        cross = model.cross_kv(enc)
    outs, pos = [], 0
    while pos < len(steps):
        n = prefill if pos == 0 else 1
        y = torch.tensor([steps[pos:pos + n]])
        valid = torch.ones(1, pos + n, dtype=torch.bool)
        if dec is None:
            outs.append(model(y, valid, cache=cache))
        else:
            outs.append(model.decode(y, valid, enc, x_valid, cache=cache, cross=cross))
        pos += n
    return torch.cat(outs, dim=1)[0]


def self_checks(model, case, ids, dec, expected, pad_id):
    """Returns {check: result}; raises when one fails."""
    checks = {}
    worst_single, worst_kv = 0.0, 0.0
    for b in range(len(ids)):
        single = run(model, [ids[b]], None if dec is None else [dec[b]], pad_id)[0]
        n = single.shape[0]
        worst_single = max(worst_single, rel_err(expected[b, :n], single))
        if model.kind != "encoder":
            inc = run_incremental(model, ids[b], None if dec is None else dec[b],
                                  prefill=max(1, n // 3))
            worst_kv = max(worst_kv, rel_err(inc, single))
    checks["padded_batch_vs_single"] = worst_single
    fam = family(case)
    cross = fam.replace("-", "_")
    if hasattr(crosscheck, cross):  # the same weights through torch.nn's transformer layers
        x, valid = pad(ids, pad_id)
        if dec is None:
            other = getattr(crosscheck, cross)(model, case["config"], x, valid)
            mask = valid
        else:
            y, mask = pad(dec, pad_id)
            other = crosscheck.marian(model, case["config"], x, valid, y, mask)
        checks["torch_nn_layers"] = rel_err(other * mask[..., None], expected)
    if model.kind != "encoder":
        checks["kv_cache_vs_full"] = worst_kv
    for k, v in checks.items():
        if not v <= TOLERANCE:
            raise AssertionError(f"{case['name']}: self-check {k} failed: {v:.3g}")

    if fam == "rwkv":
        checks.update(check_rwkv_rescale(model, case, ids, expected, pad_id))
    if model.kind == "decoder":
        checks["receptive_field"] = check_receptive_field(model, case, max(ids, key=len))
    if model.kind == "encoder-decoder":
        checks["decoder_causality"] = check_decoder_causality(model, ids[0], dec[0])
    return checks


def check_rwkv_rescale(model, case, ids, expected, pad_id):
    """RWKV's inference rescaling against the form octet converts to: the unscaled weights and
    stream with the norms' epsilons times 4^(i // R) equal transformers' rescaled model
    (rescale_as_norm_eps, <= TOLERANCE), while the configured epsilons alone do not
    (rescale_without_eps must be far from it, or the case could not tell them apart)."""
    out = {}
    try:
        model.form = "eps"
        as_eps = rel_err(run(model, ids, None, pad_id), expected)
        model.form = "plain"
        plain = rel_err(run(model, ids, None, pad_id), expected)
    finally:
        model.form = "rescaled"
    if not as_eps <= TOLERANCE:
        raise AssertionError(f"{case['name']}: the rescaled model is not the norm-eps form: "
                             f"{as_eps:.3g}")
    if not plain > 100 * TOLERANCE:
        raise AssertionError(f"{case['name']}: the norm epsilons barely matter ({plain:.3g}): "
                             "the case cannot catch a wrong one")
    out["rescale_as_norm_eps"] = as_eps
    out["rescale_without_eps"] = f"ok ({plain:.3g}: the configured epsilons alone are far off)"
    return out


def greedy_continuation(model, ids, tokens):
    """Each sequence alone, `tokens` greedy ids, each the argmax of a full pass."""
    out = []
    for seq in ids:
        seq, more = list(seq), []
        for _ in range(tokens):
            logits = run(model, [seq])[0]
            more.append(int(logits[-1].argmax()))
            seq.append(more[-1])
        out.append(more)
    return out


def changed_positions(a, b):
    return [i for i in range(a.shape[0]) if not torch.equal(a[i], b[i])]


def check_receptive_field(model, case, seq):
    """Change one token and see which positions' logits move: exactly [p, p + L*(W-1)] with a
    window W over L layers, [p, end) without one. Checks the causal mask and the window boundary
    (a key j is visible from i iff i - W < j <= i) independently of the mask code."""
    c = lm_config(case)
    layers = c.get("num_hidden_layers", c.get("n_layer"))
    window = model.window if hasattr(model, "window") else None
    n = len(seq)
    v = c["vocab_size"]
    base = run(model, [seq])[0]
    for p in (0, n // 4, n // 2, n - 2):
        other = list(seq)
        other[p] = (other[p] + 1 + p) % v
        moved = changed_positions(base, run(model, [other])[0])
        last = n - 1 if window is None else min(n - 1, p + layers * (window - 1))
        if moved != list(range(p, last + 1)):
            raise AssertionError(f"{case['name']}: token {p} moved positions {moved}, "
                                 f"expected {p}..{last}")
    if window is None:
        return "ok"
    return f"ok (window {window}: token p reaches p..p+{layers}*{window - 1})"


def check_decoder_causality(model, src, tgt):
    base = run(model, [src], [tgt])[0]
    p = len(tgt) // 2
    other = list(tgt)
    other[p] = other[p] - 1 if other[p] > 2 else other[p] + 1  # still an ordinary id
    moved = changed_positions(base, run(model, [src], [other])[0])
    if moved != list(range(p, len(tgt))):
        raise AssertionError(f"decoder token {p} moved positions {moved}")
    src2 = list(src)
    src2[0] = src2[0] - 1 if src2[0] > 2 else src2[0] + 1
    if changed_positions(base, run(model, [src2], [tgt])[0]) != list(range(len(tgt))):
        raise AssertionError("a source token does not reach every target position")
    return "ok"


def debug_tables(model, case):
    """Intermediate values that help debug an implementation (not compared by the tests)."""
    fam = family(case)
    out = {}
    if fam in ("llama", "qwen2", "mistral", "qwen3", "gemma", "gemma2", "gemma3_text", "lfm2",
               "qwen3_5_text", "qwen3_5"):
        out["rope_inv_freq"] = [float(x) for x in model.inv_freq]
    if fam == "gemma3_text":
        out["rope_local_inv_freq"] = [float(x) for x in model.local_inv_freq]
    if fam == "phi3":
        out["rope_inv_freq_short"] = [float(x) for x in model.rope.short]
        out["rope_inv_freq_long"] = [float(x) for x in model.rope.long]
        out["rope_attention_factor"] = float(model.rope.attention_factor)
    if fam == "t5":
        att = model.encoder.block[0].layer[0].SelfAttention
        for name, bidir, n in (("encoder", True, max(case["lengths"])),
                               ("decoder", False, max(case["decoder_lengths"]))):
            rel = torch.arange(-(n - 1), n)
            b32 = relative_position_bucket(rel, bidir, att.num_buckets, att.max_distance)
            out[f"{name}_buckets_for_relative_position_{-(n - 1)}_to_{n - 1}"] = b32.tolist()
            # The same buckets in float64: an implementation in double gets the same ones.
            b64 = bucket_float64(rel.tolist(), bidir, att.num_buckets, att.max_distance)
            if b64 != b32.tolist():
                raise AssertionError(f"T5 buckets differ between float32 and float64 ({name})")
    return out


def bucket_float64(rel, bidirectional, num_buckets, max_distance):
    out = []
    for r in rel:
        nb, b = num_buckets, 0
        if bidirectional:
            nb //= 2
            b = nb if r > 0 else 0
            n = abs(r)
        else:
            n = max(-r, 0)
        exact = nb // 2
        if n < exact:
            out.append(b + n)
        else:
            large = exact + int(math.log(n / exact) / math.log(max_distance / exact) * (nb - exact))
            out.append(b + min(large, nb - 1))
    return out


# --- one case ------------------------------------------------------------------------------------

def generate(case, out_root, seed):
    name, fam, c = case["name"], family(case), case["config"]
    cseed = case_seed(seed, name)
    torch.manual_seed(cseed)
    gen = torch.Generator().manual_seed(cseed)
    model = MODELS[fam](c).eval()
    query_std_factor = case["config"]["d_kv"] ** -0.5 if fam == "t5" else 1.0
    init_weights(model, gen, EMBED_STD[fam], query_std_factor)
    if fam == "distilbert" and c.get("sinusoidal_pos_embds"):
        with torch.no_grad():  # the table transformers writes, not random weights
            model.embeddings.position_embeddings.weight.copy_(
                sinusoidal_table(c["max_position_embeddings"], c["dim"]))

    out_dir = os.path.join(out_root, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    write_json(os.path.join(out_dir, "config.json"), c)
    tensors, dtypes = export(model, case, gen)
    files = ["config.json"] + write_checkpoint(out_dir, tensors, dtypes, case.get("shards", 1))
    if case.get("tokenizer"):
        write_tokenizer(out_dir, lm_config(case)["vocab_size"])
        files.append("tokenizer.json")

    # The reference runs on what the files hold (F16/BF16 rounded), read back by name.
    back = read_checkpoint(out_dir)
    for k, (t, dt) in back.items():
        want = tensors[k].to(safetensors_io.DTYPES[dt][0])
        if not torch.equal(t, want.float() if want.is_floating_point() else want):
            raise AssertionError(f"{name}: {k} did not read back")
    sd, ignored = import_(model, {k: t for k, (t, _) in back.items()}, case)
    model.load_state_dict(sd, strict=True)

    ids, dec = make_inputs(case, gen)
    pad_id = c.get("pad_token_id") or 0
    with torch.no_grad():
        expected = run(model, ids, dec, pad_id)
        checks = self_checks(model, case, ids, dec, expected, pad_id)
        debug = debug_tables(model, case)
        continuation = (greedy_continuation(model, ids, case["continuation"])
                        if case.get("continuation") else None)

    np.save(os.path.join(out_dir, "expected.npy"), expected.numpy().astype(np.float32))
    args = []
    for s in ids:
        args += ["--ids", ",".join(map(str, s))]
    for s in dec or []:
        args += ["--decoder-ids", ",".join(map(str, s))]
    output = {"encoder": "last_hidden_state", "decoder": "logits",
              "encoder-decoder": "decoder_logits"}[model.kind]
    inputs = {"ids": ids, "args": args, "output": output, "shape": list(expected.shape)}
    if dec is not None:
        inputs["decoder_ids"] = dec
    if continuation is not None:
        inputs["continuation"] = continuation
    with open(os.path.join(out_dir, "inputs.json"), "w") as f:  # one key per line
        f.write("{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                                    for k, v in sorted(inputs.items())) + "\n}\n")
    files += ["inputs.json", "expected.npy", "provenance.json"]

    provenance = {
        "script": SCRIPT,
        "command": f"python3 {SCRIPT} --out tests/golden/cases --seed {seed} --only {name}",
        "seed": seed, "case_seed": cseed,
        "torch": torch.__version__, "numpy": np.__version__,
        "python": platform.python_version(),
        "reference": "PyTorch float32, 1 thread, deterministic algorithms; ref_models/ written "
                     "from the published architectures with Hugging Face parameter names",
        "case": {k: v for k, v in case.items() if k != "config"},
        "checkpoint": {"files": [f for f in files if "safetensors" in f],
                       "dtype": case["dtype"], "ignored_tensors": ignored},
        "expected": {"file": "expected.npy", "dtype": "float32", "shape": list(expected.shape),
                     "output": output, "max_abs": float(expected.abs().max()),
                     "padded_positions": "0"},
        "self_checks": checks,
        "debug": debug,
    }
    sources = getattr(sys.modules[type(model).__module__], "SOURCES", None)
    if sources:
        provenance["restated_from"] = {"repository": "huggingface/transformers", "files": sources}
    write_json(os.path.join(out_dir, "provenance.json"), provenance)
    sizes = {f: os.path.getsize(os.path.join(out_dir, f)) for f in files}
    return checks, sizes, list(expected.shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="output folder (one sub-folder per case)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    a = ap.parse_args()
    if a.list:
        for case in CASES:
            print(f"{case['name']:24} {family(case):8} {case['covers']}")
        return 0
    if not a.out:
        ap.error("--out is required")
    only = [n for n in a.only.split(",") if n]
    unknown = set(only) - {c["name"] for c in CASES}
    if unknown:
        ap.error(f"unknown case(s): {', '.join(sorted(unknown))}")

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(a.out, exist_ok=True)
    total = 0
    print(f"{'case':24} {'family':8} {'dtype':5} {'shape':14} {'ckpt KiB':>8} {'all KiB':>8}  "
          f"self-checks (max abs err / max abs ref)")
    for case in CASES:
        if only and case["name"] not in only:
            continue
        checks, sizes, shape = generate(case, a.out, a.seed)
        ckpt = sum(s for f, s in sizes.items() if "safetensors" in f)
        total += sum(sizes.values())
        shown = ", ".join(f"{k} {v:.1e}" if isinstance(v, float) else f"{k} {v.split(' ')[0]}"
                          for k, v in checks.items())
        print(f"{case['name']:24} {family(case):8} {case['dtype']:5} {str(shape):14} "
              f"{ckpt / 1024:8.1f} {sum(sizes.values()) / 1024:8.1f}  {shown}")
    print(f"total {total / 1024:.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
