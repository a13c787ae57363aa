// Prepare-time resolution of the weights: every role of the table
// (format/tensor_roles.h) the architecture has is bound to its slot in
// LayerWeights / ModelWeights, checked for its name, shape and storage.
#include "engine/weights.h"

#include <cstdio>
#include <cstring>
#include <new>

#include "engine/mixer.h"
#include "kernels/qs8_gemm.h"

namespace octet {
namespace {

// Looks tensors up by name and checks them.
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

  // A matrix [rows, cols]: F32, or I8 with per-row (axis 0) symmetric scales,
  // row-major or in the GEMM's packed tiles (a tied head's table: its rows are
  // then gathered from the tiles).
  Status GetMatrix(const char* name, uint32_t rows, uint32_t cols, bool required, Matrix* out) {
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
      out->packed = static_cast<const int8_t*>(t->data);
    } else {
      out->q8 = static_cast<const int8_t*>(t->data);
    }
    out->scales = q->scales()->data();
    out->two_digit_input = t->input_bits == 16;
    return Status::Ok();
  }

 private:
  const Model& model_;
};

// Where a role's tensor lands in the engine's structs: a matrix, a linear
// layer's weight (with its out and in), or a F32 tensor. Empty: not read.
struct Slot {
  Matrix* matrix = nullptr;
  LinearWeights* linear = nullptr;
  const float** f32 = nullptr;
  bool empty() const { return matrix == nullptr && linear == nullptr && f32 == nullptr; }
  bool bound() const {
    return (matrix != nullptr && matrix->present()) ||
           (linear != nullptr && linear->weight.present()) || (f32 != nullptr && *f32 != nullptr);
  }
};
Slot MatrixSlot(Matrix* m) { return {m, nullptr, nullptr}; }
Slot LinearSlot(LinearWeights* l) { return {nullptr, l, nullptr}; }
Slot F32Slot(const float** f) { return {nullptr, nullptr, f}; }

Slot LayerSlot(LayerWeights& w, Role role) {
  switch (role) {
    case Role::kAttnNorm: return F32Slot(&w.attn_norm.weight);
    case Role::kAttnNormBias: return F32Slot(&w.attn_norm.bias);
    case Role::kPostAttnNorm: return F32Slot(&w.post_attn_norm.weight);
    case Role::kPostAttnNormBias: return F32Slot(&w.post_attn_norm.bias);
    case Role::kFfnNorm: return F32Slot(&w.ffn_norm.weight);
    case Role::kFfnNormBias: return F32Slot(&w.ffn_norm.bias);
    case Role::kPostFfnNorm: return F32Slot(&w.post_ffn_norm.weight);
    case Role::kPostFfnNormBias: return F32Slot(&w.post_ffn_norm.bias);
    case Role::kAttnQ: return LinearSlot(&w.attn.q);
    case Role::kAttnQBias: return F32Slot(&w.attn.q.bias);
    case Role::kAttnK: return LinearSlot(&w.attn.k);
    case Role::kAttnKBias: return F32Slot(&w.attn.k.bias);
    case Role::kAttnV: return LinearSlot(&w.attn.v);
    case Role::kAttnVBias: return F32Slot(&w.attn.v.bias);
    case Role::kAttnO: return LinearSlot(&w.attn.o);
    case Role::kAttnOBias: return F32Slot(&w.attn.o.bias);
    case Role::kAttnQNorm: return F32Slot(&w.attn.q_norm);
    case Role::kAttnKNorm: return F32Slot(&w.attn.k_norm);
    case Role::kAttnGate: return LinearSlot(&w.attn.gate);
    case Role::kCrossAttnNorm: return F32Slot(&w.cross_attn_norm.weight);
    case Role::kCrossAttnNormBias: return F32Slot(&w.cross_attn_norm.bias);
    case Role::kCrossQ: return LinearSlot(&w.cross_attn.q);
    case Role::kCrossQBias: return F32Slot(&w.cross_attn.q.bias);
    case Role::kCrossK: return LinearSlot(&w.cross_attn.k);
    case Role::kCrossKBias: return F32Slot(&w.cross_attn.k.bias);
    case Role::kCrossV: return LinearSlot(&w.cross_attn.v);
    case Role::kCrossVBias: return F32Slot(&w.cross_attn.v.bias);
    case Role::kCrossO: return LinearSlot(&w.cross_attn.o);
    case Role::kCrossOBias: return F32Slot(&w.cross_attn.o.bias);
    case Role::kFfnGate: return LinearSlot(&w.gate);
    case Role::kFfnUp: return LinearSlot(&w.up);
    case Role::kFfnUpBias: return F32Slot(&w.up.bias);
    case Role::kFfnDown: return LinearSlot(&w.down);
    case Role::kFfnDownBias: return F32Slot(&w.down.bias);
    default: break;
  }
  // Other token and channel mixers' tensors: by their place in their group.
  const RoleInfo& info = GetRole(role);
  const size_t i = RoleIndexInGroup(role);
  const RoleSlots slots = GetRoleGroup(info.group).slots;
  if (slots == RoleSlots::kNamed || i >= kMaxMixerTensors) return {};
  MixerTensors& t = slots == RoleSlots::kTokenMixer ? w.mixer : w.channel;
  if (info.storage == RoleStorage::kProduct) return LinearSlot(&t.linear[i]);
  // A matrix's bias goes with it (the fp32 operators add it).
  if (info.storage == RoleStorage::kF32 && info.with != role &&
      GetRole(info.with).storage == RoleStorage::kProduct) {
    return F32Slot(&t.linear[RoleIndexInGroup(info.with)].bias);
  }
  if (info.storage == RoleStorage::kF32) return F32Slot(&t.f32[i]);
  return {};
}

Slot ModelSlot(ModelWeights& w, Role role, const RoleArch& a) {
  switch (role) {
    case Role::kTokenEmbedding: return MatrixSlot(&w.token_embedding);
    case Role::kPositionEmbedding: return MatrixSlot(&w.position_embedding);
    case Role::kTokenTypeEmbedding: return MatrixSlot(&w.token_type_embedding);
    case Role::kEmbeddingNorm: return F32Slot(&w.embedding_norm.weight);
    case Role::kEmbeddingNormBias: return F32Slot(&w.embedding_norm.bias);
    case Role::kEncoderRelativeBias: return F32Slot(&w.encoder.relative_bias);
    case Role::kDecoderRelativeBias: return F32Slot(&w.decoder.relative_bias);
    // final_norm: the only stack's (a pre-norm encoder's, or a decoder's).
    case Role::kFinalNorm:
      return F32Slot(a.structure == fb::Structure::EncoderOnly ? &w.encoder.final_norm.weight
                                                               : &w.decoder.final_norm.weight);
    case Role::kFinalNormBias:
      return F32Slot(a.structure == fb::Structure::EncoderOnly ? &w.encoder.final_norm.bias
                                                               : &w.decoder.final_norm.bias);
    case Role::kEncoderFinalNorm: return F32Slot(&w.encoder.final_norm.weight);
    case Role::kEncoderFinalNormBias: return F32Slot(&w.encoder.final_norm.bias);
    case Role::kDecoderFinalNorm: return F32Slot(&w.decoder.final_norm.weight);
    case Role::kDecoderFinalNormBias: return F32Slot(&w.decoder.final_norm.bias);
    case Role::kLmHead:  // an lm_head beside a tied head (or in an encoder) is not read
      return a.structure != fb::Structure::EncoderOnly && !a.tied_embeddings
                 ? MatrixSlot(&w.head)
                 : Slot();
    case Role::kFinalLogitsBias: return F32Slot(&w.final_logits_bias);
    default: return {};
  }
}

// Binds the rows of `group` in layer `layer` of `stack` (model groups: kSingle,
// 0) to slot_of(role): each one the architecture has, checked for the role's
// shape and storage. Required ones must be there; optional ones are bound when
// present; a row that goes with another is read only beside it.
template <typename SlotOf>
Status BindGroup(Resolver& r, const RoleArch& a, RoleGroup group, LayerStack stack,
                 uint32_t layer, SlotOf&& slot_of) {
  for (const RoleInfo& role : RolesOf(group)) {
    const Presence presence = RolePresence(role, a, stack, layer);
    const Slot slot = slot_of(role.role);
    if (presence == Presence::kAbsent || slot.empty()) continue;
    if (role.with != role.role && !slot_of(role.with).bound()) continue;
    char name[kMaxTensorNameLength];
    if (!RoleTensorName(name, sizeof(name), role, stack, layer)) name[0] = '\0';
    const RoleShape shape = ShapeOf(role, a);
    const uint32_t rows = shape.dims[0], cols = shape.dims[1];
    const bool required = presence == Presence::kRequired;
    if (slot.linear != nullptr) {
      slot.linear->out = rows;
      slot.linear->in = cols;
      OCTET_RETURN_IF_ERROR(r.GetMatrix(name, rows, cols, required, &slot.linear->weight));
    } else if (slot.matrix != nullptr) {
      OCTET_RETURN_IF_ERROR(r.GetMatrix(name, rows, cols, required, slot.matrix));
    } else {
      OCTET_RETURN_IF_ERROR(r.Get(name, rows, cols, required, slot.f32));
    }
  }
  return Status::Ok();
}

// The epsilon of the norms of layer `layer` of `stack` (Architecture.layer_norm_eps,
// the encoder's or only stack's layers first, then the decoder's), else norm_eps.
float LayerNormEps(const fb::Architecture& a, LayerStack stack, uint32_t layer) {
  const auto* eps = a.layer_norm_eps();
  const uint64_t i = stack == LayerStack::kDecoder && a.structure() == fb::Structure::EncoderDecoder
                         ? static_cast<uint64_t>(a.num_layers()) + layer
                         : layer;
  return eps != nullptr && i < eps->size() ? eps->Get(static_cast<uint32_t>(i)) : a.norm_eps();
}

Status ResolveStack(Resolver& r, const fb::Architecture& arch, const RoleArch& a,
                    LayerStack stack, uint32_t count, LayerWeights* layers, StackWeights* out) {
  for (uint32_t i = 0; i < count; ++i) {
    LayerWeights* w = new (&layers[i]) LayerWeights();  // the struct starts its life in arena memory
    for (size_t g = 0; g < static_cast<size_t>(RoleGroup::kCount); ++g) {
      const RoleGroup group = static_cast<RoleGroup>(g);
      if (GetRoleGroup(group).scope != RoleScope::kLayer) continue;
      OCTET_RETURN_IF_ERROR(
          BindGroup(r, a, group, stack, i, [w](Role role) { return LayerSlot(*w, role); }));
    }
    const TokenMixer& mixer = LayerTokenMixer(arch, stack, i);
    if (mixer.product_strides != nullptr) {
      for (const RoleInfo& role : RolesOf(mixer.roles)) {
        if (role.storage != RoleStorage::kProduct) continue;
        LinearWeights& lw = w->mixer.linear[RoleIndexInGroup(role.role)];
        mixer.product_strides(arch, role.role, &lw.in_stride, &lw.out_stride);
      }
    }
    const float eps = LayerNormEps(arch, stack, i);
    for (NormWeights* n : {&w->attn_norm, &w->post_attn_norm, &w->cross_attn_norm, &w->ffn_norm,
                           &w->post_ffn_norm}) {
      n->eps = eps;
    }
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
  const fb::Architecture& arch = model.architecture();
  const RoleArch a = RoleArchOf(arch);
  new (out) ModelWeights();  // the struct starts its life in arena memory
  Resolver r(model);
  auto model_slot = [out, &a](Role role) { return ModelSlot(*out, role, a); };
  OCTET_RETURN_IF_ERROR(BindGroup(r, a, RoleGroup::kEmbeddings, LayerStack::kSingle, 0, model_slot));
  LayerStackCount stacks[2];
  const int count = LayerStacksOf(a, stacks);
  for (int s = 0; s < count; ++s) {
    StackWeights* stack = stacks[s].stack == LayerStack::kEncoder ||
                                  a.structure == fb::Structure::EncoderOnly
                              ? &out->encoder
                              : &out->decoder;
    OCTET_RETURN_IF_ERROR(
        ResolveStack(r, arch, a, stacks[s].stack, stacks[s].layers, layers, stack));
    layers += stacks[s].layers;
  }
  OCTET_RETURN_IF_ERROR(BindGroup(r, a, RoleGroup::kStacks, LayerStack::kSingle, 0, model_slot));
  out->embedding_norm.eps = arch.norm_eps();
  const float final_eps = arch.final_norm_eps() > 0.0f ? arch.final_norm_eps() : arch.norm_eps();
  out->encoder.final_norm.eps = final_eps;
  out->decoder.final_norm.eps = final_eps;
  if (a.structure != fb::Structure::EncoderOnly && a.tied_embeddings) {
    out->head = out->token_embedding;
  }
  return BindGroup(r, a, RoleGroup::kHead, LayerStack::kSingle, 0, model_slot);
}

namespace {

// Calls fn(lw) for every F32 product of one layer (absent linear layers have
// no weight).
template <typename Fn>
Status ForEachLayerProduct(LayerWeights& w, Fn&& fn) {
  for (LinearWeights* lw : {&w.attn.q, &w.attn.k, &w.attn.v, &w.attn.o, &w.attn.gate,
                            &w.cross_attn.q, &w.cross_attn.k, &w.cross_attn.v, &w.cross_attn.o,
                            &w.gate, &w.up, &w.down}) {
    if (lw->weight.f32 == nullptr || lw->out == 0 || lw->in == 0) continue;
    OCTET_RETURN_IF_ERROR(fn(*lw));
  }
  // Other token and channel mixers' products (engine/weights.h MixerTensors).
  for (MixerTensors* t : {&w.mixer, &w.channel}) {
    for (LinearWeights& lw : t->linear) {
      if (lw.weight.f32 == nullptr || lw.out == 0 || lw.in == 0) continue;
      OCTET_RETURN_IF_ERROR(fn(lw));
    }
  }
  return Status::Ok();
}

// Lets a mapped model's pages of packed rows go (Model::ReleasePages) as
// each piece is packed.
F32PackedRows ReleaseAsPacked(const Model& model) {
  F32PackedRows done;
  done.fn = [](const void* ctx, const float* rows, size_t bytes) {
    static_cast<const Model*>(ctx)->ReleasePages(rows, bytes);
  };
  done.ctx = &model;
  return done;
}

// Packs lw's F32 product into `set` for its call strides and points lw.fc at
// it; the model's pages of it go as they are packed, and all of them after.
Status AddProduct(F32FullyConnectedSet* set, const Model& model, LinearWeights& lw,
                  size_t threads) {
  OCTET_ASSIGN_OR_RETURN(lw.fc, set->Add(lw.out, lw.in, lw.weight.f32, lw.bias, threads,
                                         lw.in_stride, lw.out_stride, ReleaseAsPacked(model)));
  model.ReleasePages(lw.weight.f32, size_t{lw.out} * lw.in * sizeof(float));
  return Status::Ok();
}

}  // namespace

Status PrepareF32Products(const Model& model, size_t threads, LayerWeights* layers,
                          ModelWeights* weights, F32FullyConnectedSet* set) {
  const fb::Architecture& a = model.architecture();
  const bool head = weights->head.f32 != nullptr && a.vocab_size() > 0 && a.hidden_size() > 0;
  size_t count = head ? 1 : 0;
  for (size_t l = 0; l < LayerWeightsCount(a); ++l) {
    OCTET_RETURN_IF_ERROR(ForEachLayerProduct(layers[l], [&](LinearWeights&) {
      ++count;
      return Status::Ok();
    }));
  }
  // (int8 files do not initialize XNNPACK.)
  if (count == 0 || F32FullyConnectedUnavailable() != nullptr) return Status::Ok();
  OCTET_RETURN_IF_ERROR(set->Reserve(count));
  for (size_t l = 0; l < LayerWeightsCount(a); ++l) {
    OCTET_RETURN_IF_ERROR(ForEachLayerProduct(
        layers[l], [&](LinearWeights& lw) { return AddProduct(set, model, lw, threads); }));
  }
  if (!head) return Status::Ok();
  OCTET_ASSIGN_OR_RETURN(weights->head_fc,
                         set->Add(a.vocab_size(), a.hidden_size(), weights->head.f32, nullptr,
                                  threads, 0, 0, ReleaseAsPacked(model)));
  model.ReleasePages(weights->head.f32,
                     static_cast<size_t>(a.vocab_size()) * a.hidden_size() * sizeof(float));
  return Status::Ok();
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
  const size_t count = LayerWeightsCount(a);
  layers_state_ = new (std::nothrow) State[count > 0 ? count : 1];
  if (layers_state_ == nullptr) {
    return Status::Error(StatusCode::kOutOfMemory,
                         "weight stream: out of memory for the state of %zu layers", count);
  }
  count_ = count;  // the destructor's layers
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
  const Status counted = ForEachLayerProduct(w, [&](LinearWeights&) {
    ++count;
    return Status::Ok();
  });
  (void)counted;  // the callback cannot fail
  if (count == 0 || F32FullyConnectedUnavailable() != nullptr) return nullptr;
  F32FullyConnectedSet* set = new (std::nothrow) F32FullyConnectedSet();
  Status s = set == nullptr ? Status(StatusCode::kOutOfMemory, "") : set->Reserve(count);
  if (s.ok()) {
    s = ForEachLayerProduct(w, [&](LinearWeights& lw) {
      return AddProduct(set, *model_, lw, threads_);
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
  const Status cleared = ForEachLayerProduct(w, [](LinearWeights& lw) {
    lw.fc = nullptr;
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
      set->Add(a.vocab_size(), a.hidden_size(), weights_->head.f32, nullptr, threads_, 0, 0,
               ReleaseAsPacked(*model_));
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
  // The token embedding's rows this pass gathered go whether or not the head
  // stays packed: fault-around maps their neighbours too, so a few thousand
  // lookups would otherwise leave most of the table resident.
  Release(embedding_range_);
  if (!head_state_.keep) Release(head_state_.range);
}

}  // namespace octet
