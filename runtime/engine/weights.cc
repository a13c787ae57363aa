// Prepare-time resolution of the weights: names and shapes follow
// format/tensor_names.h, which biases exist follows the architecture (and the
// converter's RequiredTensors).
#include "engine/weights.h"

#include <cstdio>
#include <cstring>
#include <new>

#include "kernels/qs8_gemm.h"

namespace octet {
namespace {

// Looks tensors up and checks them; `prefix` names the layer ("layers.3.") or is empty.
class Resolver {
 public:
  explicit Resolver(const Model& model) : model_(model) {}

  // A F32 tensor of exactly [rows] (cols == 0) or [rows, cols]. *out stays null
  // when the tensor is absent and not required.
  Status Get(const char* name, uint32_t rows, uint32_t cols, bool required, const float** out) {
    *out = nullptr;
    const TensorView* t = model_.Find(name);
    if (t == nullptr) {
      if (!required) return Status::Ok();
      return Status::Error(StatusCode::kInvalidModel, "tensor '%s' is missing", name);
    }
    const bool matrix = cols != 0;
    if (t->dtype != fb::DType::F32 || t->rank != (matrix ? 2 : 1) || t->shape[0] != rows ||
        (matrix && t->shape[1] != cols)) {
      if (matrix) {
        return Status::Error(StatusCode::kInvalidModel, "tensor '%s' must be F32 [%u, %u]", name,
                             rows, cols);
      }
      return Status::Error(StatusCode::kInvalidModel, "tensor '%s' must be F32 [%u]", name, rows);
    }
    *out = static_cast<const float*>(t->data);
    return Status::Ok();
  }

  // A matrix [rows, cols]: F32, or I8 with per-row (axis 0) symmetric scales.
  // Packed I8 (the GEMM's tiles) only where products read it (lookup false).
  Status GetMatrix(const char* name, uint32_t rows, uint32_t cols, bool required, Matrix* out,
                   bool lookup = false) {
    *out = Matrix();
    const TensorView* t = model_.Find(name);
    if (t == nullptr || t->dtype != fb::DType::I8) {
      return Get(name, rows, cols, required, &out->f32);
    }
    if (t->rank != 2 || t->shape[0] != rows || t->shape[1] != cols) {
      return Status::Error(StatusCode::kInvalidModel, "tensor '%s' must be [%u, %u]", name, rows,
                           cols);
    }
    const fb::Quantization* q = t->quant;  // the loader checked the scale count and values
    if (q == nullptr || q->scheme() != fb::QuantScheme::PerChannel || q->axis() != 0) {
      return Status::Error(StatusCode::kUnsupported, "tensor '%s' is int8 with a scheme other "
                           "than per-row (per output channel) scales", name);
    }
    if (q->zero_points() != nullptr) {
      for (uint32_t i = 0; i < q->zero_points()->size(); ++i) {
        if (q->zero_points()->Get(i) != 0) {
          return Status::Error(StatusCode::kUnsupported, "tensor '%s' has a non-zero zero "
                               "point; octet's int8 is symmetric", name);
        }
      }
    }
    if (cols > kQs8GemmMaxK) {
      return Status::Error(StatusCode::kUnsupported, "tensor '%s': %u columns exceed the int8 "
                           "GEMM's limit", name, cols);
    }
    if (t->layout == fb::TensorLayout::PackedQs8N16K4) {
      if (lookup) {
        return Status::Error(StatusCode::kInvalidModel, "tensor '%s' is packed for products, "
                             "but its rows are looked up", name);
      }
      out->packed = static_cast<const int8_t*>(t->data);
    } else {
      out->q8 = static_cast<const int8_t*>(t->data);
    }
    out->scales = q->scales()->data();
    out->two_digit_input = t->input_bits == 16;
    return Status::Ok();
  }

  Status Norm(const char* name, const fb::Architecture& a, bool required, NormWeights* out) {
    char weight[kMaxTensorNameLength], bias[kMaxTensorNameLength];
    std::snprintf(weight, sizeof(weight), "%s.weight", name);
    std::snprintf(bias, sizeof(bias), "%s.bias", name);
    OCTET_RETURN_IF_ERROR(Get(weight, a.hidden_size(), 0, required, &out->weight));
    if (out->weight == nullptr) return Status::Ok();
    return Get(bias, a.hidden_size(), 0, a.norm() == fb::NormKind::LayerNorm, &out->bias);
  }

  Status Linear(const char* name, uint32_t rows, uint32_t cols, bool bias, LinearWeights* out) {
    char weight[kMaxTensorNameLength], bias_name[kMaxTensorNameLength];
    std::snprintf(weight, sizeof(weight), "%s.weight", name);
    std::snprintf(bias_name, sizeof(bias_name), "%s.bias", name);
    out->out = rows;
    out->in = cols;
    OCTET_RETURN_IF_ERROR(GetMatrix(weight, rows, cols, true, &out->weight));
    if (!bias) return Status::Ok();
    return Get(bias_name, rows, 0, true, &out->bias);
  }

 private:
  const Model& model_;
};

// "layers.3." + suffix into out[kMaxTensorNameLength].
const char* Name(char* out, LayerStack stack, uint32_t layer, const char* suffix) {
  if (!LayerTensorName(out, kMaxTensorNameLength, stack, layer, suffix)) out[0] = '\0';
  return out;
}

Status ResolveAttention(Resolver& r, const fb::Architecture& a, LayerStack stack, uint32_t layer,
                        const char* block, AttentionWeights* out) {
  const fb::Attention& att = *a.attention();
  const uint32_t h = a.hidden_size();
  const uint32_t q_rows = att.num_heads() * att.head_dim();
  const uint32_t kv_rows = att.num_kv_heads() * att.head_dim();
  char suffix[64], name[kMaxTensorNameLength];
  const struct {
    const char* proj;
    uint32_t rows, cols;
    bool bias;
    LinearWeights* out;
  } projections[] = {
      {"q", q_rows, h, att.qkv_bias(), &out->q},
      {"k", kv_rows, h, att.qkv_bias(), &out->k},
      {"v", kv_rows, h, att.qkv_bias(), &out->v},
      {"o", h, q_rows, att.out_bias(), &out->o},
  };
  for (const auto& p : projections) {
    std::snprintf(suffix, sizeof(suffix), "%s.%s", block, p.proj);
    OCTET_RETURN_IF_ERROR(
        r.Linear(Name(name, stack, layer, suffix), p.rows, p.cols, p.bias, p.out));
  }
  if (!att.qk_norm() || std::strcmp(block, "attn") != 0) return Status::Ok();
  std::snprintf(suffix, sizeof(suffix), "%s.q_norm.weight", block);
  OCTET_RETURN_IF_ERROR(r.Get(Name(name, stack, layer, suffix), att.head_dim(), 0, true,
                              &out->q_norm));
  std::snprintf(suffix, sizeof(suffix), "%s.k_norm.weight", block);
  return r.Get(Name(name, stack, layer, suffix), att.head_dim(), 0, true, &out->k_norm);
}

Status ResolveLayer(Resolver& r, const fb::Architecture& a, LayerStack stack, uint32_t layer,
                    bool cross, LayerWeights* out) {
  char name[kMaxTensorNameLength];
  const uint32_t h = a.hidden_size(), inter = a.intermediate_size();
  const bool ffn_bias = FamilyHasFfnBias(a.family());
  OCTET_RETURN_IF_ERROR(r.Norm(Name(name, stack, layer, "attn_norm"), a, true, &out->attn_norm));
  OCTET_RETURN_IF_ERROR(ResolveAttention(r, a, stack, layer, "attn", &out->attn));
  if (a.sandwich_norms()) {
    OCTET_RETURN_IF_ERROR(
        r.Norm(Name(name, stack, layer, "post_attn_norm"), a, true, &out->post_attn_norm));
    OCTET_RETURN_IF_ERROR(
        r.Norm(Name(name, stack, layer, "post_ffn_norm"), a, true, &out->post_ffn_norm));
  }
  if (cross) {
    OCTET_RETURN_IF_ERROR(
        r.Norm(Name(name, stack, layer, "cross_attn_norm"), a, true, &out->cross_attn_norm));
    OCTET_RETURN_IF_ERROR(ResolveAttention(r, a, stack, layer, "cross_attn", &out->cross_attn));
  }
  OCTET_RETURN_IF_ERROR(r.Norm(Name(name, stack, layer, "ffn_norm"), a, true, &out->ffn_norm));
  if (a.gated_ffn()) {
    OCTET_RETURN_IF_ERROR(r.Linear(Name(name, stack, layer, "ffn.gate"), inter, h, false,
                                   &out->gate));
  }
  OCTET_RETURN_IF_ERROR(r.Linear(Name(name, stack, layer, "ffn.up"), inter, h, ffn_bias, &out->up));
  return r.Linear(Name(name, stack, layer, "ffn.down"), h, inter, ffn_bias, &out->down);
}

Status ResolveStack(Resolver& r, const fb::Architecture& a, LayerStack stack, uint32_t count,
                    bool cross, LayerWeights* layers, StackWeights* out) {
  for (uint32_t i = 0; i < count; ++i) {
    new (&layers[i]) LayerWeights();  // the struct starts its life in arena memory
    OCTET_RETURN_IF_ERROR(ResolveLayer(r, a, stack, i, cross, &layers[i]));
  }
  out->layers = layers;
  out->num_layers = count;
  return Status::Ok();
}

}  // namespace

bool HasLayers(const fb::Architecture& a) { return a.num_layers() + a.num_decoder_layers() > 0; }

size_t LayerWeightsCount(const fb::Architecture& a) {
  return static_cast<size_t>(a.num_layers()) + a.num_decoder_layers();
}

bool UsesInt8Attention(const Model& model) {
  const fb::Architecture& a = model.architecture();
  if (!HasLayers(a)) return false;
  // Any int8 matrix of a layer: a file may keep some of them F32 (the
  // converter's --keep-fp32 and its last tuning step), and that must not
  // change how the whole model attends.
  for (size_t i = 0; i < model.num_tensors(); ++i) {
    const TensorView& t = model.tensor(i);
    if (t.dtype == fb::DType::I8 && t.rank == 2 && std::strstr(t.name, "layers.") != nullptr) {
      return true;
    }
  }
  return false;
}

Status ResolveWeights(const Model& model, LayerWeights* layers, ModelWeights* out) {
  const fb::Architecture& a = model.architecture();
  const fb::Attention& att = *a.attention();
  const uint32_t h = a.hidden_size(), vocab = a.vocab_size();
  const bool pre = a.norm_placement() == fb::NormPlacement::Pre;
  const bool relative = a.position() == fb::PositionKind::RelativeBias;
  new (out) ModelWeights();  // the struct starts its life in arena memory
  Resolver r(model);

  OCTET_RETURN_IF_ERROR(
      r.GetMatrix("token_embedding", vocab, h, true, &out->token_embedding, true));
  if (a.position() == fb::PositionKind::Learned) {
    OCTET_RETURN_IF_ERROR(r.GetMatrix("position_embedding",
                                      a.max_positions() + a.position_offset(), h, true,
                                      &out->position_embedding, true));
  }
  if (a.type_vocab_size() > 0) {
    OCTET_RETURN_IF_ERROR(r.GetMatrix("token_type_embedding", a.type_vocab_size(), h, true,
                                      &out->token_type_embedding, true));
  }
  // BERT's embedding norm; layer-free BERT files (embeddings only) may leave it out.
  OCTET_RETURN_IF_ERROR(r.Norm("embedding_norm", a, FamilyIsBertLike(a.family()) && HasLayers(a),
                               &out->embedding_norm));

  const uint32_t buckets = att.relative_buckets(), heads = att.num_heads();
  switch (a.structure()) {
    case fb::Structure::EncoderOnly:
      OCTET_RETURN_IF_ERROR(
          ResolveStack(r, a, LayerStack::kSingle, a.num_layers(), false, layers, &out->encoder));
      if (relative) {
        OCTET_RETURN_IF_ERROR(r.Get("encoder.relative_bias", buckets, heads, true,
                                    &out->encoder.relative_bias));
      }
      break;
    case fb::Structure::DecoderOnly:
      OCTET_RETURN_IF_ERROR(
          ResolveStack(r, a, LayerStack::kSingle, a.num_layers(), false, layers, &out->decoder));
      OCTET_RETURN_IF_ERROR(r.Norm("final_norm", a, pre, &out->decoder.final_norm));
      if (relative) {
        OCTET_RETURN_IF_ERROR(r.Get("decoder.relative_bias", buckets, heads, true,
                                    &out->decoder.relative_bias));
      }
      break;
    case fb::Structure::EncoderDecoder:
      OCTET_RETURN_IF_ERROR(
          ResolveStack(r, a, LayerStack::kEncoder, a.num_layers(), false, layers, &out->encoder));
      OCTET_RETURN_IF_ERROR(ResolveStack(r, a, LayerStack::kDecoder, a.num_decoder_layers(), true,
                                         layers + a.num_layers(), &out->decoder));
      OCTET_RETURN_IF_ERROR(r.Norm("encoder.final_norm", a, pre, &out->encoder.final_norm));
      OCTET_RETURN_IF_ERROR(r.Norm("decoder.final_norm", a, pre, &out->decoder.final_norm));
      if (relative) {
        OCTET_RETURN_IF_ERROR(r.Get("encoder.relative_bias", buckets, heads, true,
                                    &out->encoder.relative_bias));
        OCTET_RETURN_IF_ERROR(r.Get("decoder.relative_bias", buckets, heads, true,
                                    &out->decoder.relative_bias));
      }
      break;
  }
  if (a.structure() != fb::Structure::EncoderOnly) {
    if (a.tied_embeddings()) {
      out->head = out->token_embedding;
    } else {
      OCTET_RETURN_IF_ERROR(r.GetMatrix("lm_head", vocab, h, true, &out->head));
    }
    OCTET_RETURN_IF_ERROR(r.Get("final_logits_bias", vocab, 0, a.family() == fb::Family::Marian,
                                &out->final_logits_bias));
  }
  return Status::Ok();
}

namespace {

// Calls fn(weight, bias, n, k, &fc) for every F32 product of one layer (absent
// linear layers have no weight).
template <typename Fn>
Status ForEachLayerProduct(LayerWeights& w, Fn&& fn) {
  for (LinearWeights* lw : {&w.attn.q, &w.attn.k, &w.attn.v, &w.attn.o, &w.cross_attn.q,
                            &w.cross_attn.k, &w.cross_attn.v, &w.cross_attn.o, &w.gate, &w.up,
                            &w.down}) {
    if (lw->weight.f32 == nullptr || lw->out == 0 || lw->in == 0) continue;
    OCTET_RETURN_IF_ERROR(fn(lw->weight.f32, lw->bias, lw->out, lw->in, &lw->fc));
  }
  return Status::Ok();
}

}  // namespace

Status PrepareF32Products(const Model& model, size_t threads, LayerWeights* layers,
                          ModelWeights* weights, F32FullyConnectedSet* set) {
  const fb::Architecture& a = model.architecture();
  // Calls fn(weight, bias, n, k, &fc) for every F32 product: each linear layer,
  // then the head.
  auto for_each_product = [&](auto&& fn) -> Status {
    for (size_t l = 0; l < LayerWeightsCount(a); ++l) {
      OCTET_RETURN_IF_ERROR(ForEachLayerProduct(layers[l], fn));
    }
    if (weights->head.f32 != nullptr && a.vocab_size() > 0 && a.hidden_size() > 0) {
      return fn(weights->head.f32, nullptr, a.vocab_size(), a.hidden_size(), &weights->head_fc);
    }
    return Status::Ok();
  };
  size_t count = 0;
  OCTET_RETURN_IF_ERROR(for_each_product(
      [&](const float*, const float*, size_t, size_t, const F32FullyConnected**) {
        ++count;
        return Status::Ok();
      }));
  // (int8 files do not initialize XNNPACK.)
  if (count == 0 || F32FullyConnectedUnavailable() != nullptr) return Status::Ok();
  OCTET_RETURN_IF_ERROR(set->Reserve(count));
  return for_each_product([&](const float* weight, const float* bias, size_t n, size_t k,
                              const F32FullyConnected** out) {
    OCTET_ASSIGN_OR_RETURN(*out, set->Add(n, k, weight, bias, threads));
    model.ReleasePages(weight, n * k * sizeof(float));
    return Status::Ok();
  });
}

void WeightStream::Range::Cover(const TensorView& t) {
  const uint8_t* b = static_cast<const uint8_t*>(t.data);
  if (b == nullptr || t.size == 0) return;
  if (begin == nullptr || b < begin) begin = b;
  if (end == nullptr || b + t.size > end) end = b + t.size;
}

WeightStream::~WeightStream() {
  Drop();
  for (size_t i = 0; i < count_; ++i) delete layers_state_[i].kept;
  delete head_state_.kept;
  delete[] layers_state_;
}

Status WeightStream::Init(const Model& model, size_t threads, LayerWeights* layers,
                          ModelWeights* weights) {
  const fb::Architecture& a = model.architecture();
  model_ = &model;
  threads_ = threads;
  layers_ = layers;
  weights_ = weights;
  count_ = LayerWeightsCount(a);
  layers_state_ = new (std::nothrow) State[count_ > 0 ? count_ : 1];
  if (layers_state_ == nullptr) {
    return Status(StatusCode::kOutOfMemory, "no memory for the weight stream");
  }
  // Each layer's tensors by name ("layers.3.", "decoder.layers.0.", ...): the
  // file keeps a layer's tensors together, so one range per layer covers them.
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  for (size_t i = 0; i < count_; ++i) {
    const bool decoder_part = enc_dec && i >= a.num_layers();
    const LayerStack stack = !enc_dec ? LayerStack::kSingle
                             : decoder_part ? LayerStack::kDecoder
                                            : LayerStack::kEncoder;
    const auto layer = static_cast<unsigned>(decoder_part ? i - a.num_layers() : i);
    char prefix[kMaxTensorNameLength];
    if (!LayerTensorName(prefix, sizeof(prefix), stack, layer, "")) {
      return Status(StatusCode::kInternal, "weight stream: layer name too long");
    }
    const size_t length = std::strlen(prefix);
    for (size_t t = 0; t < model.num_tensors(); ++t) {
      const TensorView& v = model.tensor(t);
      if (std::strncmp(v.name, prefix, length) == 0) layers_state_[i].range.Cover(v);
    }
  }
  for (size_t t = 0; t < model.num_tensors(); ++t) {
    const TensorView& v = model.tensor(t);
    if (std::strcmp(v.name, "lm_head") == 0) head_state_.range.Cover(v);
    if (std::strcmp(v.name, "token_embedding") == 0) embedding_range_.Cover(v);
  }
  if (head_state_.range.begin == nullptr) head_state_.range = embedding_range_;  // tied
  // What stays: the head (read on every pass), then the first layers, while
  // their bytes fit keep_bytes.
  uint64_t left = keep_bytes_;
  auto keep = [&left](State& s) {
    const uint64_t bytes = static_cast<uint64_t>(s.range.end - s.range.begin);
    s.keep = bytes <= left;
    if (s.keep) left -= bytes;
  };
  keep(head_state_);
  for (size_t i = 0; i < count_; ++i) keep(layers_state_[i]);
  return Status::Ok();
}

void WeightStream::Release(const Range& r) const {
  if (r.begin != nullptr) model_->ReleasePages(r.begin, static_cast<size_t>(r.end - r.begin));
}

// Packs every F32 product of `w` into a new set and points w's fc at it; null
// (w's fc cleared: its products run on f32_gemm__ref) when packing fails or
// there is nothing to pack.
F32FullyConnectedSet* WeightStream::PackLayer(LayerWeights& w) const {
  size_t count = 0;
  const Status counted = ForEachLayerProduct(
      w, [&](const float*, const float*, size_t, size_t, const F32FullyConnected**) {
        ++count;
        return Status::Ok();
      });
  (void)counted;  // the callback cannot fail
  if (count == 0 || F32FullyConnectedUnavailable() != nullptr) return nullptr;
  F32FullyConnectedSet* set = new (std::nothrow) F32FullyConnectedSet();
  Status s = set == nullptr ? Status(StatusCode::kOutOfMemory, "") : set->Reserve(count);
  if (s.ok()) {
    s = ForEachLayerProduct(w, [&](const float* weight, const float* bias, size_t n, size_t k,
                                   const F32FullyConnected** out) {
      OCTET_ASSIGN_OR_RETURN(*out, set->Add(n, k, weight, bias, threads_));
      model_->ReleasePages(weight, n * k * sizeof(float));
      return Status::Ok();
    });
  }
  if (!s.ok()) {
    ClearLayer(w);
    delete set;
    return nullptr;
  }
  return set;
}

void WeightStream::ClearLayer(LayerWeights& w) {
  const Status cleared = ForEachLayerProduct(
      w, [](const float*, const float*, size_t, size_t, const F32FullyConnected** fc) {
        *fc = nullptr;
        return Status::Ok();
      });
  (void)cleared;  // the callback cannot fail
}

F32FullyConnectedSet* WeightStream::PackHead() const {
  const fb::Architecture& a = model_->architecture();
  if (weights_->head.f32 == nullptr || F32FullyConnectedUnavailable() != nullptr) return nullptr;
  F32FullyConnectedSet* set = new (std::nothrow) F32FullyConnectedSet();
  if (set == nullptr || !set->Reserve(1).ok()) {
    delete set;
    return nullptr;
  }
  Result<const F32FullyConnected*> fc =
      set->Add(a.vocab_size(), a.hidden_size(), weights_->head.f32, nullptr, threads_);
  if (!fc.ok()) {
    delete set;
    return nullptr;
  }
  weights_->head_fc = fc.value();
  model_->ReleasePages(weights_->head.f32,
                       static_cast<size_t>(a.vocab_size()) * a.hidden_size() * sizeof(float));
  return set;
}

void WeightStream::Drop() {
  if (current_ != nullptr) {
    ClearLayer(*current_);
    current_ = nullptr;
  }
  if (head_packed_) {
    weights_->head_fc = nullptr;
    head_packed_ = false;
  }
  delete set_;
  set_ = nullptr;
}

void WeightStream::BeginLayer(const LayerWeights& layer) {
  Drop();
  const size_t index = static_cast<size_t>(&layer - layers_);
  if (index >= count_) return;
  State& state = layers_state_[index];
  if (state.keep) {
    if (state.kept == nullptr) state.kept = PackLayer(layers_[index]);
    return;
  }
  set_ = PackLayer(layers_[index]);
  if (set_ != nullptr) current_ = &layers_[index];
}

void WeightStream::EndLayer(const LayerWeights& layer) {
  Drop();
  const size_t index = static_cast<size_t>(&layer - layers_);
  if (index < count_ && !layers_state_[index].keep) Release(layers_state_[index].range);
}

void WeightStream::BeginHead() {
  Drop();
  if (head_state_.keep) {
    if (head_state_.kept == nullptr) head_state_.kept = PackHead();
    return;
  }
  set_ = PackHead();
  head_packed_ = set_ != nullptr;
}

void WeightStream::EndHead() {
  Drop();
  if (head_state_.keep) return;
  Release(head_state_.range);
  Release(embedding_range_);
}

}  // namespace octet
