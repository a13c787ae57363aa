// Loading a model file: trust nothing. Order of checks:
//   1. the size prefix and identifier, so a wrong file gets a plain message;
//   2. the FlatBuffers Verifier (every offset and vector inside the buffer);
//   3. semantic checks: version, architecture, every tensor and blob inside the
//      data segment, sizes equal to shape x dtype, scales finite and > 0,
//      canonical tensors shaped as the architecture says (format/tensor_roles.h),
//      layer indices in range.
// Only then does anyone read a weight.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/alloc.h"
#include "core/checked_math.h"
#include "format/model.h"
#include "format/tensor_roles.h"
#include "kernels/kernel_table.h"  // qs8_packed_check and the packed layout's constants
#include "kernels/position.h"  // RopeFreqParamsError
#include "text/tokenizer_check.h"

namespace octet {
namespace {

constexpr StatusCode kBad = StatusCode::kInvalidModel;

size_t MinimumFileSize() { return sizeof(uint32_t) + 2 * sizeof(uint32_t); }

uint32_t ReadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

bool IsFiniteFloat(float v) { return std::isfinite(v); }

Status CheckName(const flatbuffers::String* name, const char* what, size_t index) {
  if (name == nullptr || name->size() == 0) {
    return Status::Error(kBad, "%s %zu has no name", what, index);
  }
  if (name->size() > kMaxTensorNameLength) {
    return Status::Error(kBad, "%s %zu has a name of %u bytes (limit %u)", what, index,
                         name->size(), kMaxTensorNameLength);
  }
  for (uint32_t i = 0; i < name->size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name->Get(i));
    if (c < 0x21 || c > 0x7e) {
      return Status::Error(kBad, "%s %zu has a name with a non-printable byte 0x%02x", what,
                           index, c);
    }
  }
  return Status::Ok();
}

Status CheckTokenId(int32_t id, uint32_t vocab, const char* what) {
  if (id < -1 || (id >= 0 && static_cast<uint32_t>(id) >= vocab)) {
    return Status::Error(kBad, "architecture: %s %d is outside the vocabulary (%u)", what, id,
                         vocab);
  }
  return Status::Ok();
}

Status CheckRange(uint32_t value, uint32_t lo, uint32_t hi, const char* what) {
  if (value < lo || value > hi) {
    return Status::Error(kBad, "architecture: %s = %u is outside [%u, %u]", what, value, lo, hi);
  }
  return Status::Ok();
}

// (format 1.5) Architecture.layer_mixers: empty, or one token mixer per layer
// (the encoder's then the decoder's), each a kind this runtime knows.
Status CheckLayerMixers(const fb::Architecture& a) {
  const auto* mixers = a.layer_mixers();
  if (mixers == nullptr) return Status::Ok();
  const uint64_t layers = static_cast<uint64_t>(a.num_layers()) +
                          (a.structure() == fb::Structure::EncoderDecoder ? a.num_decoder_layers() : 0);
  if (mixers->size() != 0 && mixers->size() != layers) {
    return Status::Error(kBad, "architecture: layer_mixers has %u entries for %llu layers",
                         mixers->size(), static_cast<unsigned long long>(layers));
  }
  for (uint32_t i = 0; i < mixers->size(); ++i) {
    const uint8_t kind = static_cast<uint8_t>(mixers->Get(i));
    if (kind > static_cast<uint8_t>(fb::TokenMixer::MAX)) {
      return Status::Error(kBad, "architecture: layer_mixers[%u] is %u, not a token mixer this "
                                 "runtime knows (a newer file?)", i, kind);
    }
    // (format 1.8) A Gated DeltaNet's shape.
    if (mixers->Get(i) == fb::TokenMixer::GatedDeltaNet) {
      if (a.structure() != fb::Structure::DecoderOnly) {
        return Status::Error(kBad, "architecture: layer %u is a Gated DeltaNet, which only "
                                   "decoder-only models have", i);
      }
      const fb::LinearAttention* lin = a.linear_attention();
      if (lin == nullptr) {
        return Status::Error(kBad, "architecture: layer %u is a Gated DeltaNet but the "
                                   "architecture has no linear_attention table", i);
      }
      OCTET_RETURN_IF_ERROR(CheckRange(lin->key_heads(), 1, kMaxHeads, "linear_attention.key_heads"));
      OCTET_RETURN_IF_ERROR(
          CheckRange(lin->value_heads(), 1, kMaxHeads, "linear_attention.value_heads"));
      OCTET_RETURN_IF_ERROR(
          CheckRange(lin->key_dim(), 1, kMaxLinearHeadDim, "linear_attention.key_dim"));
      OCTET_RETURN_IF_ERROR(
          CheckRange(lin->value_dim(), 1, kMaxLinearHeadDim, "linear_attention.value_dim"));
      OCTET_RETURN_IF_ERROR(
          CheckRange(lin->conv_kernel(), 2, kMaxConvKernel, "linear_attention.conv_kernel"));
      if (lin->value_heads() % lin->key_heads() != 0) {
        return Status::Error(kBad, "architecture: linear_attention.value_heads %u is not a "
                                   "multiple of key_heads %u", lin->value_heads(),
                             lin->key_heads());
      }
    }
    // (format 1.9) RWKV's time mix keeps a state per sequence: decoders only.
    if (mixers->Get(i) == fb::TokenMixer::RwkvTimeMix &&
        a.structure() != fb::Structure::DecoderOnly) {
      return Status::Error(kBad, "architecture: layer %u is an RWKV time mix, which only "
                                 "decoder-only models have", i);
    }
    // (format 1.7) A short convolution's taps.
    if (mixers->Get(i) == fb::TokenMixer::ShortConv) {
      if (a.short_conv() == nullptr) {
        return Status::Error(kBad, "architecture: layer %u is a short convolution but the "
                                   "architecture has no short_conv table", i);
      }
      OCTET_RETURN_IF_ERROR(
          CheckRange(a.short_conv()->kernel(), 2, kMaxShortConvKernel, "short_conv.kernel"));
    }
  }
  return Status::Ok();
}

// (format 1.9) Architecture.channel_mixer, layer_norm_eps and final_norm_eps.
Status CheckChannelMixerAndEps(const fb::Architecture& a) {
  const uint8_t channel = static_cast<uint8_t>(a.channel_mixer());
  if (channel > static_cast<uint8_t>(fb::ChannelMixer::MAX)) {
    return Status::Error(kBad, "architecture: channel_mixer is %u, not a channel mixer this "
                               "runtime knows (a newer file?)", channel);
  }
  if (a.channel_mixer() == fb::ChannelMixer::RwkvChannelMix &&
      (a.structure() != fb::Structure::DecoderOnly ||
       a.norm_placement() != fb::NormPlacement::Pre)) {
    // Its token shift keeps the last row of each sequence between calls.
    return Status::Error(kBad, "architecture: channel_mixer RwkvChannelMix is for pre-norm "
                               "decoder-only models (the file has %s, %s-norm)",
                         fb::EnumNameStructure(a.structure()),
                         fb::EnumNameNormPlacement(a.norm_placement()));
  }
  if (const auto* eps = a.layer_norm_eps()) {
    const uint64_t layers = static_cast<uint64_t>(a.num_layers()) +
                            (a.structure() == fb::Structure::EncoderDecoder ? a.num_decoder_layers()
                                                                            : 0);
    if (eps->size() != 0 && eps->size() != layers) {
      return Status::Error(kBad, "architecture: layer_norm_eps has %u entries for %llu layers",
                           eps->size(), static_cast<unsigned long long>(layers));
    }
    for (uint32_t i = 0; i < eps->size(); ++i) {
      const float e = eps->Get(i);
      if (!IsFiniteFloat(e) || !(e > 0.0f)) {
        return Status::Error(kBad, "architecture: layer_norm_eps[%u] = %g must be finite and > 0",
                             i, static_cast<double>(e));
      }
    }
  }
  const float final_eps = a.final_norm_eps();
  if (!IsFiniteFloat(final_eps) || final_eps < 0.0f) {
    return Status::Error(kBad, "architecture: final_norm_eps = %g must be finite and > 0 "
                               "(0: norm_eps)", static_cast<double>(final_eps));
  }
  return Status::Ok();
}

Status CheckArchitecture(const fb::Architecture& a) {
  using fb::Family;
  using fb::Structure;
  const Family family = a.family();
  if (family == Family::Unknown || family > Family::MAX) {
    return Status::Error(StatusCode::kUnsupported, "architecture: unknown family %d",
                         static_cast<int>(family));
  }
  if (a.structure() > Structure::MAX) {
    return Status::Error(kBad, "architecture: unknown structure %d",
                         static_cast<int>(a.structure()));
  }
  Structure expected = Structure::DecoderOnly;
  if (family == Family::Bert || family == Family::DistilBert || family == Family::Roberta ||
      family == Family::XlmRoberta || family == Family::ModernBert) {
    expected = Structure::EncoderOnly;
  }
  if (family == Family::Marian || family == Family::T5) expected = Structure::EncoderDecoder;
  if (a.structure() != expected) {
    return Status::Error(kBad, "architecture: family %s must be %s, the file says %s",
                         fb::EnumNameFamily(family), fb::EnumNameStructure(expected),
                         fb::EnumNameStructure(a.structure()));
  }
  OCTET_RETURN_IF_ERROR(CheckRange(a.vocab_size(), 1, kMaxVocab, "vocab_size"));
  OCTET_RETURN_IF_ERROR(CheckRange(a.hidden_size(), 1, kMaxHidden, "hidden_size"));
  OCTET_RETURN_IF_ERROR(CheckRange(a.num_layers(), 0, kMaxLayers, "num_layers"));
  OCTET_RETURN_IF_ERROR(CheckRange(a.num_decoder_layers(), 0,
                                   a.structure() == Structure::EncoderDecoder ? kMaxLayers : 0,
                                   "num_decoder_layers"));
  const bool has_layers = a.num_layers() + a.num_decoder_layers() > 0;
  OCTET_RETURN_IF_ERROR(CheckRange(a.intermediate_size(), has_layers ? 1 : 0, kMaxIntermediate,
                                   "intermediate_size"));
  OCTET_RETURN_IF_ERROR(CheckRange(a.max_positions(), 0, kMaxPositions, "max_positions"));
  if (a.norm() > fb::NormKind::MAX || a.norm_placement() > fb::NormPlacement::MAX ||
      a.activation() > fb::Activation::MAX || a.position() > fb::PositionKind::MAX) {
    return Status::Error(kBad, "architecture: an enum field (norm, placement, activation or "
                               "position) holds an unknown value");
  }
  if (!IsFiniteFloat(a.norm_eps()) || !(a.norm_eps() > 0.0f) || !(a.norm_eps() < 1.0f)) {
    return Status::Error(kBad, "architecture: norm_eps = %g must be in (0, 1)",
                         static_cast<double>(a.norm_eps()));
  }
  if (!IsFiniteFloat(a.embedding_scale()) || !(a.embedding_scale() > 0.0f) ||
      !IsFiniteFloat(a.logits_scale()) || !(a.logits_scale() > 0.0f)) {
    return Status::Error(kBad, "architecture: embedding_scale and logits_scale must be finite "
                               "and > 0");
  }
  OCTET_RETURN_IF_ERROR(CheckRange(a.type_vocab_size(), 0, 1024, "type_vocab_size"));

  const fb::Attention& att = *a.attention();
  OCTET_RETURN_IF_ERROR(CheckRange(att.num_heads(), 1, kMaxHeads, "attention.num_heads"));
  OCTET_RETURN_IF_ERROR(
      CheckRange(att.num_kv_heads(), 1, att.num_heads(), "attention.num_kv_heads"));
  if (att.num_heads() % att.num_kv_heads() != 0) {
    return Status::Error(kBad, "architecture: num_kv_heads %u does not divide num_heads %u",
                         att.num_kv_heads(), att.num_heads());
  }
  OCTET_RETURN_IF_ERROR(CheckRange(att.head_dim(), 1, kMaxHeadDim, "attention.head_dim"));
  if (!IsFiniteFloat(att.scale()) || att.scale() < 0.0f) {
    return Status::Error(kBad, "architecture: attention.scale = %g must be finite and >= 0",
                         static_cast<double>(att.scale()));
  }
  if (a.position() == fb::PositionKind::RelativeBias) {
    OCTET_RETURN_IF_ERROR(
        CheckRange(att.relative_buckets(), 1, 4096, "attention.relative_buckets"));
    OCTET_RETURN_IF_ERROR(CheckRange(att.relative_max_distance(), 1, kMaxPositions,
                                     "attention.relative_max_distance"));
  }
  if (a.position() == fb::PositionKind::Learned) {
    OCTET_RETURN_IF_ERROR(CheckRange(a.max_positions(), 1, kMaxPositions, "max_positions"));
  }
  // (format 1.4)
  OCTET_RETURN_IF_ERROR(CheckRange(a.position_offset(), 0,
                                   a.position() == fb::PositionKind::Learned ? kMaxPositions : 0,
                                   "position_offset"));
  if (!IsFiniteFloat(a.final_logit_softcap()) || a.final_logit_softcap() < 0.0f ||
      !IsFiniteFloat(att.logit_softcap()) || att.logit_softcap() < 0.0f) {
    return Status(kBad, "architecture: final_logit_softcap and attention.logit_softcap must be "
                        "finite and >= 0");
  }
  if (a.sandwich_norms() && a.norm_placement() != fb::NormPlacement::Pre) {
    return Status(kBad, "architecture: sandwich_norms needs pre-norm layers");
  }
  if (const auto* sliding = att.sliding_layers()) {
    const uint32_t layers = a.structure() == Structure::EncoderDecoder ? 0 : a.num_layers();
    if (sliding->size() != 0 && (sliding->size() != layers || att.sliding_window() == 0)) {
      return Status::Error(kBad, "architecture: attention.sliding_layers has %u entries for %u "
                                 "layers (sliding_window %u)", sliding->size(), layers,
                           att.sliding_window());
    }
  }
  // (format 1.6)
  if (att.sliding_window_ahead() != 0 &&
      (a.structure() != Structure::EncoderOnly || att.sliding_window() == 0)) {
    return Status::Error(kBad, "architecture: attention.sliding_window_ahead %u is for encoders "
                               "with a sliding_window (the file has %s, sliding_window %u)",
                         att.sliding_window_ahead(), fb::EnumNameStructure(a.structure()),
                         att.sliding_window());
  }
  if (!a.first_attn_norm() &&
      (a.structure() != Structure::EncoderOnly || a.norm_placement() != fb::NormPlacement::Pre)) {
    return Status(kBad, "architecture: first_attn_norm false is for pre-norm encoders");
  }
  OCTET_RETURN_IF_ERROR(CheckLayerMixers(a));
  OCTET_RETURN_IF_ERROR(CheckChannelMixerAndEps(a));
  if (a.position() == fb::PositionKind::Rope) {
    const fb::Rope* rope = a.rope();
    if (rope == nullptr) return Status(kBad, "architecture: position Rope without rope parameters");
    if (rope->rotary_dim() > att.head_dim() || rope->rotary_dim() % 2 != 0) {
      return Status::Error(kBad, "architecture: rope.rotary_dim %u must be even and <= head_dim %u",
                           rope->rotary_dim(), att.head_dim());
    }
    // (format 1.4)
    if (!IsFiniteFloat(rope->local_theta()) ||
        !(rope->local_theta() == 0.0f || rope->local_theta() > 1.0f) ||
        !IsFiniteFloat(rope->attention_factor()) || !(rope->attention_factor() > 0.0f)) {
      return Status(kBad, "architecture: rope.local_theta must be 0 or > 1 and "
                          "rope.attention_factor finite and > 0");
    }
    const uint32_t pairs = (rope->rotary_dim() != 0 ? rope->rotary_dim() : att.head_dim()) / 2;
    const auto* shorts = rope->short_factors();
    const auto* longs = rope->long_factors();
    const bool longrope = rope->scaling() == fb::RopeScaling::LongRope;
    if ((longrope && (shorts == nullptr || shorts->size() != pairs)) ||
        (!longrope && shorts != nullptr && shorts->size() != 0) ||
        (longs != nullptr && longs->size() != 0 && (!longrope || longs->size() != pairs))) {
      return Status::Error(kBad, "architecture: rope short/long factors must be LongRope's, "
                                 "%u each", pairs);
    }
    // What the forward pass computes its frequencies from (kernels/position.h),
    // with each set of factors.
    RopeFreqParams rp;
    rp.rotary_dim = pairs * 2;
    rp.theta = rope->theta();
    rp.scaling = static_cast<RopeScalingKind>(rope->scaling());
    rp.factor = rope->factor();
    rp.low_freq_factor = rope->low_freq_factor();
    rp.high_freq_factor = rope->high_freq_factor();
    rp.original_max_positions = rope->original_max_positions();
    for (const auto* list : {shorts, longs}) {
      if (list != nullptr && list->size() != 0) rp.ext_factors = list->data();
      if (const char* error = RopeFreqParamsError(rp)) {
        return Status::Error(kBad, "architecture: %s (rope.theta = %g)", error,
                             static_cast<double>(rope->theta()));
      }
    }
  }
  OCTET_RETURN_IF_ERROR(CheckTokenId(a.pad_token_id(), a.vocab_size(), "pad_token_id"));
  OCTET_RETURN_IF_ERROR(CheckTokenId(a.bos_token_id(), a.vocab_size(), "bos_token_id"));
  OCTET_RETURN_IF_ERROR(CheckTokenId(a.eos_token_id(), a.vocab_size(), "eos_token_id"));
  OCTET_RETURN_IF_ERROR(
      CheckTokenId(a.decoder_start_token_id(), a.vocab_size(), "decoder_start_token_id"));
  return Status::Ok();
}

Status CheckQuantization(const fb::Tensor& t, const TensorView& v) {
  const fb::Quantization* q = t.quant();
  const bool quantized = q != nullptr && q->scheme() != fb::QuantScheme::None;
  if (v.dtype == fb::DType::I8 && !quantized) {
    return Status::Error(kBad, "tensor '%s' is int8 without quantization scales", v.name);
  }
  if (!quantized) {
    if (q != nullptr && ((q->scales() && q->scales()->size() > 0) ||
                         (q->zero_points() && q->zero_points()->size() > 0))) {
      return Status::Error(kBad, "tensor '%s' has scales but no quantization scheme", v.name);
    }
    return Status::Ok();
  }
  if (v.dtype != fb::DType::I8 && v.dtype != fb::DType::U8) {
    return Status::Error(kBad, "tensor '%s' is %s but quantized; only int8 tensors have scales",
                         v.name, DTypeName(v.dtype));
  }
  uint64_t expected = 0;
  switch (q->scheme()) {
    case fb::QuantScheme::PerTensor:
      expected = 1;
      break;
    case fb::QuantScheme::PerChannel:
      if (q->axis() >= static_cast<uint32_t>(v.rank)) {
        return Status::Error(kBad, "tensor '%s': quantization axis %u but rank %d", v.name,
                             q->axis(), v.rank);
      }
      expected = v.shape[q->axis()];
      break;
    case fb::QuantScheme::PerBlock: {
      const uint32_t last = v.shape[v.rank - 1];
      if (q->block_size() == 0 || last % q->block_size() != 0) {
        return Status::Error(kBad, "tensor '%s': block size %u does not divide the last "
                             "dimension %u", v.name, q->block_size(), last);
      }
      expected = v.numel / q->block_size();
      break;
    }
    default:
      return Status::Error(kBad, "tensor '%s': unknown quantization scheme %d", v.name,
                           static_cast<int>(q->scheme()));
  }
  const uint32_t n_scales = q->scales() ? q->scales()->size() : 0;
  if (n_scales != expected) {
    return Status::Error(kBad, "tensor '%s': %u scales, expected %llu", v.name, n_scales,
                         static_cast<unsigned long long>(expected));
  }
  for (uint32_t i = 0; i < n_scales; ++i) {
    const float s = q->scales()->Get(i);
    if (!IsFiniteFloat(s) || !(s > 0.0f)) {
      return Status::Error(kBad, "tensor '%s': scale %u is %g (must be finite and > 0)", v.name,
                           i, static_cast<double>(s));
    }
  }
  if (q->zero_points() != nullptr && q->zero_points()->size() != 0) {
    if (q->zero_points()->size() != n_scales) {
      return Status::Error(kBad, "tensor '%s': %u zero points for %u scales", v.name,
                           q->zero_points()->size(), n_scales);
    }
    for (uint32_t i = 0; i < n_scales; ++i) {
      const int32_t zp = q->zero_points()->Get(i);
      if (zp < -128 || zp > 127) {
        return Status::Error(kBad, "tensor '%s': zero point %u is %d (must be in [-128, 127])",
                             v.name, i, zp);
      }
    }
  }
  return Status::Ok();
}

// Bytes of an int8 [n, k] matrix in PackedQs8N16K4 tiles (kernels/qs8_packed_gemm.h).
uint64_t PackedQs8Bytes(uint64_t n, uint64_t k) {
  const uint64_t kp = (k + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  return (n + kQs8PackedNr - 1) / kQs8PackedNr * (kQs8PackedCorrBytes + kQs8PackedNr * kp);
}

// The packed tiles' derived bytes are what the packing function writes: every
// corr[c] is -128 x the sum of its channel's weights, and the padding (k past
// K, channels past N) is zero. A wrong corr would not endanger memory, but it
// would make the kernels that use it disagree with the ones that do not.
// qs8_packed_check (kernels/qs8_packed_check.h) finds the first bad tile in one
// vectorized pass over the weights; this describes it.
Status DescribeBadPackedTile(const TensorView& v, size_t j) {
  const size_t k = v.shape[1];
  const size_t groups = (k + kQs8PackedKGroup - 1) / kQs8PackedKGroup;
  const size_t group_bytes = kQs8PackedNr * kQs8PackedKGroup;
  const uint8_t* tile = static_cast<const uint8_t*>(v.data) + j * qs8_packed_tile_bytes(k);
  const int8_t* w = reinterpret_cast<const int8_t*>(tile + kQs8PackedCorrBytes);  // [g][16][4]
  for (size_t c = 0; c < kQs8PackedNr; ++c) {
    int32_t sum = 0;
    for (size_t g = 0; g < groups; ++g) {
      const int8_t* channel = w + g * group_bytes + c * kQs8PackedKGroup;  // [4]
      for (size_t t = 0; t < kQs8PackedKGroup; ++t) sum += channel[t];
    }
    int32_t corr;
    std::memcpy(&corr, tile + c * sizeof(int32_t), sizeof(corr));
    if (corr != -128 * sum) {
      return Status::Error(kBad, "tensor '%s': packed tile %zu, channel %zu: row sum "
                           "correction %d, expected %d", v.name, j, c, corr, -128 * sum);
    }
  }
  return Status::Error(kBad, "tensor '%s': packed tile %zu has non-zero padding", v.name, j);
}

Status CheckPackedQs8(const TensorView& v) {
  const size_t n = v.shape[0], k = v.shape[1];
  const size_t tiles = (n + kQs8PackedNr - 1) / kQs8PackedNr;
  const size_t bad = GetKernelTable().qs8_packed_check(n, k, static_cast<const int8_t*>(v.data));
  return bad < tiles ? DescribeBadPackedTile(v, bad) : Status::Ok();
}

Status BuildTensorView(const fb::Tensor& t, size_t index, const uint8_t* data_segment,
                       uint64_t data_size, TensorView* v) {
  OCTET_RETURN_IF_ERROR(CheckName(t.name(), "tensor", index));
  v->name = t.name()->c_str();
  v->dtype = t.dtype();
  const size_t element_size = DTypeSize(v->dtype);
  if (element_size == 0) {
    return Status::Error(kBad, "tensor '%s' has unknown dtype %d", v->name,
                         static_cast<int>(v->dtype));
  }
  const auto* shape = t.shape();
  if (shape->size() < 1 || shape->size() > static_cast<uint32_t>(kMaxTensorRank)) {
    return Status::Error(kBad, "tensor '%s' has rank %u (must be 1..%d)", v->name, shape->size(),
                         kMaxTensorRank);
  }
  v->rank = static_cast<int>(shape->size());
  uint64_t numel = 1;
  for (int d = 0; d < v->rank; ++d) {
    const uint32_t dim = shape->Get(d);
    if (dim < 1 || dim > (1u << 31)) {
      return Status::Error(kBad, "tensor '%s' has dimension %d = %u", v->name, d, dim);
    }
    v->shape[d] = dim;
    if (!CheckedMul(numel, dim, &numel)) {
      return Status::Error(kBad, "tensor '%s': element count overflows", v->name);
    }
  }
  v->numel = numel;
  v->layout = t.layout();
  uint64_t bytes = 0;
  if (v->layout == fb::TensorLayout::PackedQs8N16K4) {
    if (v->dtype != fb::DType::I8 || v->rank != 2 || v->shape[1] > kQs8GemmMaxK) {
      return Status::Error(kBad, "tensor '%s' is packed but not an int8 matrix with at most "
                           "%zu columns", v->name, kQs8GemmMaxK);
    }
    bytes = PackedQs8Bytes(v->shape[0], v->shape[1]);
    if (bytes != t.size()) {
      return Status::Error(kBad, "tensor '%s': size %llu bytes, but its packed tiles take %llu",
                           v->name, static_cast<unsigned long long>(t.size()),
                           static_cast<unsigned long long>(bytes));
    }
  } else if (v->layout != fb::TensorLayout::RowMajor) {
    return Status::Error(kBad, "tensor '%s' has unknown layout %d", v->name,
                         static_cast<int>(v->layout));
  } else if (!CheckedMul(numel, element_size, &bytes) || bytes != t.size()) {
    return Status::Error(kBad, "tensor '%s': size %llu bytes does not match shape x %s", v->name,
                         static_cast<unsigned long long>(t.size()), DTypeName(v->dtype));
  }
  if (t.offset() % kDataAlignment != 0) {
    return Status::Error(kBad, "tensor '%s': offset %llu is not %llu-byte aligned", v->name,
                         static_cast<unsigned long long>(t.offset()),
                         static_cast<unsigned long long>(kDataAlignment));
  }
  if (!RangeInside(t.offset(), t.size(), data_size)) {
    return Status::Error(kBad, "tensor '%s': bytes [%llu, +%llu) lie outside the data segment "
                         "(%llu bytes)", v->name, static_cast<unsigned long long>(t.offset()),
                         static_cast<unsigned long long>(t.size()),
                         static_cast<unsigned long long>(data_size));
  }
  v->input_bits = t.input_bits();
  if (v->input_bits != 8 && (v->input_bits != 16 || v->dtype != fb::DType::I8 || v->rank != 2)) {
    return Status::Error(kBad, "tensor '%s' has input_bits %u (8, or 16 for an int8 matrix)",
                         v->name, static_cast<unsigned>(v->input_bits));
  }
  v->data = data_segment + t.offset();
  v->size = t.size();
  OCTET_RETURN_IF_ERROR(CheckQuantization(t, *v));
  if (v->layout == fb::TensorLayout::PackedQs8N16K4) OCTET_RETURN_IF_ERROR(CheckPackedQs8(*v));
  const fb::Quantization* q = t.quant();
  v->quant = (q != nullptr && q->scheme() != fb::QuantScheme::None) ? q : nullptr;
  return Status::Ok();
}

Status CheckShape2(const TensorView* v, uint64_t rows, uint64_t cols) {
  if (v == nullptr) return Status::Ok();
  if (v->rank != 2 || v->shape[0] != rows || v->shape[1] != cols) {
    return Status::Error(kBad, "tensor '%s' must be [%llu, %llu] for this architecture", v->name,
                         static_cast<unsigned long long>(rows),
                         static_cast<unsigned long long>(cols));
  }
  return Status::Ok();
}

int CompareViews(const void* a, const void* b) {
  return std::strcmp(static_cast<const TensorView*>(a)->name,
                     static_cast<const TensorView*>(b)->name);
}

}  // namespace

size_t DTypeSize(fb::DType dtype) {
  switch (dtype) {
    case fb::DType::F32: return 4;
    case fb::DType::F16: return 2;
    case fb::DType::BF16: return 2;
    case fb::DType::I8: return 1;
    case fb::DType::I32: return 4;
    case fb::DType::U8: return 1;
  }
  return 0;
}

const char* DTypeName(fb::DType dtype) {
  if (dtype > fb::DType::MAX) return "unknown";
  return fb::EnumNameDType(dtype);
}

Model::~Model() { Release(); }

Model::Model(Model&& other) noexcept
    : file_(std::move(other.file_)),
      root_(std::exchange(other.root_, nullptr)),
      data_offset_(std::exchange(other.data_offset_, 0)),
      tensors_(std::exchange(other.tensors_, nullptr)),
      num_tensors_(std::exchange(other.num_tensors_, 0)) {}

Model& Model::operator=(Model&& other) noexcept {
  if (this != &other) {
    Release();
    file_ = std::move(other.file_);
    root_ = std::exchange(other.root_, nullptr);
    data_offset_ = std::exchange(other.data_offset_, 0);
    tensors_ = std::exchange(other.tensors_, nullptr);
    num_tensors_ = std::exchange(other.num_tensors_, 0);
  }
  return *this;
}

void Model::Release() {
  Free(tensors_);
  tensors_ = nullptr;
  num_tensors_ = 0;
  root_ = nullptr;
}

const TensorView* Model::Find(const char* name) const {
  size_t lo = 0, hi = num_tensors_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int c = std::strcmp(tensors_[mid].name, name);
    if (c == 0) return &tensors_[mid];
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return nullptr;
}

const uint8_t* Model::blob(size_t index, uint64_t* size) const {
  const fb::Tokenizer* tok = root_->tokenizer();
  if (tok == nullptr || tok->files() == nullptr || index >= tok->files()->size()) return nullptr;
  const fb::Blob* b = tok->files()->Get(static_cast<uint32_t>(index));
  *size = b->size();
  return file_.data() + data_offset_ + b->offset();
}

Result<Model> Model::Load(const char* path) {
  Result<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  Result<Model> model = Verify(std::move(file).value());
  if (!model.ok()) {
    Status s = model.status();
    return s.WithContext("%s", path);
  }
  return model;
}

Result<Model> Model::FromBuffer(const void* data, size_t size) {
  if (data == nullptr) return Status(StatusCode::kInvalidArgument, "model buffer is null");
  if (reinterpret_cast<uintptr_t>(data) % kDataAlignment != 0) {
    return Status(StatusCode::kInvalidArgument, "model buffer must be 64-byte aligned");
  }
  return Verify(MappedFile::Borrow(data, size));
}

Result<Model> Model::FromFileRange(int fd, uint64_t offset, uint64_t length) {
  Result<MappedFile> file = MappedFile::OpenRange(fd, offset, length, kDataAlignment);
  if (!file.ok()) return file.status();
  return Verify(std::move(file).value());
}

Result<Model> Model::Verify(MappedFile file) {
  const uint8_t* bytes = file.data();
  const uint64_t file_size = file.size();
  if (file_size < MinimumFileSize()) {
    return Status::Error(kBad, "file is %llu bytes, too short to be an octet model",
                         static_cast<unsigned long long>(file_size));
  }
  if (!fb::SizePrefixedModelBufferHasIdentifier(bytes)) {
    return Status::Error(kBad, "not an octet model (identifier '%.4s', expected '%s')",
                         reinterpret_cast<const char*>(bytes + 8), fb::ModelIdentifier());
  }
  const uint64_t fb_size = ReadLe32(bytes);
  if (fb_size > file_size - sizeof(uint32_t)) {
    return Status::Error(kBad, "truncated: the metadata claims %llu bytes, the file has %llu",
                         static_cast<unsigned long long>(fb_size + sizeof(uint32_t)),
                         static_cast<unsigned long long>(file_size));
  }
  // The Verifier asserts that its buffer is under FlatBuffers' 2 GiB limit;
  // no writer makes metadata that large, so a file whose prefix claims it is corrupt.
  if (fb_size + sizeof(uint32_t) >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return Status::Error(kBad, "the metadata claims %llu bytes, over the FlatBuffers limit of "
                         "2 GiB", static_cast<unsigned long long>(fb_size + sizeof(uint32_t)));
  }
  flatbuffers::Verifier::Options verifier_options;
  verifier_options.max_depth = 64;
  verifier_options.max_tables = 1u << 22;
  verifier_options.check_alignment = true;
  flatbuffers::Verifier verifier(bytes, static_cast<size_t>(fb_size + sizeof(uint32_t)),
                                 verifier_options);
  if (!fb::VerifySizePrefixedModelBuffer(verifier)) {
    return Status(kBad, "the metadata failed FlatBuffers verification (corrupt or truncated)");
  }
  const fb::Model* root = fb::GetSizePrefixedModel(bytes);
  if (root->format_major() == 0) {
    return Status(kBad, "format version is missing");
  }
  if (root->format_major() > kFormatMajor) {
    return Status::Error(StatusCode::kUnsupported,
                         "made for format %u.%u; this octet reads format %u.x: upgrade octet",
                         root->format_major(), root->format_minor(), kFormatMajor);
  }
  if (root->data_alignment() != kDataAlignment) {
    return Status::Error(kBad, "data alignment %u (expected %llu)", root->data_alignment(),
                         static_cast<unsigned long long>(kDataAlignment));
  }
  uint64_t data_offset = 0, data_end = 0;
  if (!CheckedAlignUp(fb_size + sizeof(uint32_t), kDataAlignment, &data_offset) ||
      !CheckedAdd(data_offset, root->data_size(), &data_end) || data_end != file_size) {
    return Status::Error(kBad, "file is %llu bytes, but its layout says %llu (truncated or "
                         "extended)", static_cast<unsigned long long>(file_size),
                         static_cast<unsigned long long>(data_end));
  }
  OCTET_RETURN_IF_ERROR(CheckArchitecture(*root->architecture()));
  const fb::Architecture& arch = *root->architecture();
  const uint8_t* data_segment = bytes + data_offset;
  const uint64_t data_size = root->data_size();

  Model model;
  model.root_ = root;
  model.data_offset_ = data_offset;
  const uint32_t n = root->tensors() ? root->tensors()->size() : 0;
  if (n > 0) {
    // Zeroed, as the views are filled field by field below.
    const size_t index_bytes = static_cast<size_t>(n) * sizeof(TensorView);
    if (index_bytes / sizeof(TensorView) == n) {
      model.tensors_ = static_cast<TensorView*>(Allocate(index_bytes, alignof(TensorView)));
    }
    if (model.tensors_ != nullptr) std::memset(static_cast<void*>(model.tensors_), 0, index_bytes);
    if (model.tensors_ == nullptr) {
      return Status::Error(StatusCode::kOutOfMemory, "cannot index %u tensors", n);
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    OCTET_RETURN_IF_ERROR(BuildTensorView(*root->tensors()->Get(i), i, data_segment, data_size,
                                          &model.tensors_[i]));
    ++model.num_tensors_;
  }
  if (model.num_tensors_ > 1) {  // qsort's base may not be null, even for 0 elements
    std::qsort(model.tensors_, model.num_tensors_, sizeof(TensorView), CompareViews);
  }
  for (size_t i = 1; i < model.num_tensors_; ++i) {
    if (std::strcmp(model.tensors_[i - 1].name, model.tensors_[i].name) == 0) {
      return Status::Error(kBad, "tensor name '%s' appears twice", model.tensors_[i].name);
    }
  }

  // Canonical tensors against the architecture (format/tensor_roles.h): the
  // token embedding is there, the model-level matrices (embedding tables and
  // the head) the architecture may have are shaped as it says, and every layer
  // index is in range. The engine checks the rest as it binds the weights.
  const RoleArch roles = RoleArchOf(arch);
  if (model.Find(GetRole(Role::kTokenEmbedding).name) == nullptr) {
    return Status(kBad, "tensor 'token_embedding' is missing");
  }
  for (RoleGroup group : {RoleGroup::kEmbeddings, RoleGroup::kHead}) {
    for (const RoleInfo& role : RolesOf(group)) {
      if (role.storage == RoleStorage::kF32 ||
          RolePresence(role, roles, LayerStack::kSingle, 0) == Presence::kAbsent) {
        continue;
      }
      const RoleShape shape = ShapeOf(role, roles);
      OCTET_RETURN_IF_ERROR(CheckShape2(model.Find(role.name), shape.dims[0], shape.dims[1]));
    }
  }
  const bool encoder_decoder = arch.structure() == fb::Structure::EncoderDecoder;
  for (size_t i = 0; i < model.num_tensors_; ++i) {
    const char* name = model.tensors_[i].name;
    LayerStack stack = LayerStack::kSingle;
    uint64_t layer = 0;
    const char* suffix = nullptr;
    if (!ParseLayerName(name, &stack, &layer, &suffix)) continue;
    const uint64_t limit = stack == LayerStack::kSingle    ? (encoder_decoder ? 0 : arch.num_layers())
                           : !encoder_decoder              ? 0
                           : stack == LayerStack::kEncoder ? arch.num_layers()
                                                           : arch.num_decoder_layers();
    if (layer >= limit) {
      return Status::Error(kBad, "tensor '%s' names layer %llu, but the architecture has %llu",
                           name, static_cast<unsigned long long>(layer),
                           static_cast<unsigned long long>(limit));
    }
  }

  // Tokenizer blobs and the memory plan.
  if (const fb::Tokenizer* tok = root->tokenizer()) {
    if (tok->kind() > fb::TokenizerKind::MAX) return Status(kBad, "unknown tokenizer kind");
    const uint32_t nb = tok->files() ? tok->files()->size() : 0;
    for (uint32_t i = 0; i < nb; ++i) {
      const fb::Blob* b = tok->files()->Get(i);
      OCTET_RETURN_IF_ERROR(CheckName(b->name(), "tokenizer file", i));
      if (b->offset() % kDataAlignment != 0 || !RangeInside(b->offset(), b->size(), data_size)) {
        return Status::Error(kBad, "tokenizer file '%s' lies outside the data segment",
                             b->name()->c_str());
      }
    }
    if (const fb::TokenizerSpec* spec = tok->compiled()) {
      OCTET_RETURN_IF_ERROR(text::CheckTokenizerSpec(*spec, arch.vocab_size()));
    }
  }
  if (const fb::MemoryPlan* plan = root->memory_plan()) {
    const uint32_t na = plan->arenas() ? plan->arenas()->size() : 0;
    for (uint32_t i = 0; i < na; ++i) {
      const fb::ArenaPlan* a = plan->arenas()->Get(i);
      if (a->kind() > fb::ArenaKind::MAX || a->bytes() > (1ull << 48)) {
        return Status::Error(kBad, "memory plan entry %u is invalid", i);
      }
    }
  }
  model.file_ = std::move(file);
  return model;
}

}  // namespace octet
