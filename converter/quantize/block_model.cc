#include "quantize/block_model.h"

#include <algorithm>

#include "format/tensor_roles.h"
#include "import/error.h"
#include "quantize/quantize.h"

namespace octet {
namespace convert {

namespace {

// The sorted ids `ids` use, with the decoder's start token (encoder-decoders).
std::vector<int32_t> UsedIds(const fb::ArchitectureT& a,
                             const std::vector<std::vector<int32_t>>& ids) {
  std::vector<int32_t> used;
  for (const std::vector<int32_t>& s : ids) used.insert(used.end(), s.begin(), s.end());
  if (a.structure == fb::Structure::EncoderDecoder && a.decoder_start_token_id >= 0) {
    used.push_back(a.decoder_start_token_id);
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  return used;
}

// id's index in the sorted `vocabulary`, or -1.
int32_t BlockId(const std::vector<int32_t>& vocabulary, int32_t id) {
  const auto it = std::lower_bound(vocabulary.begin(), vocabulary.end(), id);
  return it != vocabulary.end() && *it == id ? static_cast<int32_t>(it - vocabulary.begin()) : -1;
}

}  // namespace

std::vector<std::vector<int32_t>> BlockIds(const BlockCut& cut,
                                           const std::vector<std::vector<int32_t>>& ids) {
  if (cut.vocabulary.empty()) return ids;
  std::vector<std::vector<int32_t>> out = ids;
  for (std::vector<int32_t>& s : out) {
    for (int32_t& id : s) {
      id = BlockId(cut.vocabulary, id);
      if (id < 0) Fail("internal: an id the block was not cut for");
    }
  }
  return out;
}

BlockCut CutBlock(const ModelSpec& spec, LayerStack stack, uint32_t layer,
                  const std::vector<std::vector<int32_t>>* ids) {
  const fb::ArchitectureT& a = spec.architecture;
  const bool enc_dec = a.structure == fb::Structure::EncoderDecoder;
  if (enc_dec == (stack == LayerStack::kSingle)) {
    Fail("internal: layer blocks of ", enc_dec ? "encoder-decoders name a stack" : "single stacks");
  }
  const bool decoder = stack == LayerStack::kDecoder;
  const uint32_t count = decoder ? a.num_decoder_layers : a.num_layers;
  if (layer >= count) Fail("internal: no layer ", layer, " to cut");
  BlockCut cut;
  cut.stack = stack;
  cut.first = layer == 0;
  cut.last = layer + 1 == count && (!enc_dec || decoder);
  cut.spec.model_type = spec.model_type;
  fb::ArchitectureT& b = cut.spec.architecture;
  b = a;
  b.num_layers = enc_dec && decoder ? 0 : 1;
  b.num_decoder_layers = enc_dec && decoder ? 1 : 0;
  // Per-layer lists: the encoder's (or only stack's) layers, then the decoder's.
  const uint32_t index = decoder ? a.num_layers + layer : layer;
  if (b.attention && !b.attention->sliding_layers.empty()) {
    b.attention->sliding_layers = {a.attention->sliding_layers.at(index)};
  }
  if (!b.layer_mixers.empty()) b.layer_mixers = {a.layer_mixers.at(index)};
  if (!b.layer_norm_eps.empty()) b.layer_norm_eps = {a.layer_norm_eps.at(index)};
  // Only the stack's own layer 0 goes without attn_norm (ModernBERT).
  if (layer != 0) b.first_attn_norm = true;
  if (!cut.first) {
    // Positions added to the embeddings are in the stream already.
    const fb::PositionKind p = b.position;
    if (p == fb::PositionKind::Learned || p == fb::PositionKind::SinusoidalSplit ||
        p == fb::PositionKind::SinusoidalInterleaved) {
      b.position = fb::PositionKind::None;
      b.position_offset = 0;
    }
    b.type_vocab_size = 0;
    if (!cut.last) {
      b.vocab_size = 1;
      b.pad_token_id = b.bos_token_id = b.eos_token_id = b.decoder_start_token_id = -1;
    }
  }

  // A first block that does not compute logits: its vocabulary cut to the ids
  // it is fed, when its token table is read whole rows at a time.
  const TensorMapping* table = nullptr;
  for (const TensorMapping& m : spec.tensors) {
    if (RoleOf(m.name).role == Role::kTokenEmbedding) table = &m;
  }
  if (cut.first && !cut.last && ids != nullptr && table != nullptr && !table->source.empty() &&
      !table->transpose && table->parts == 1 && table->first_row == 0 && table->rows.empty()) {
    cut.vocabulary = UsedIds(a, *ids);
    if (cut.vocabulary.empty() || cut.vocabulary.size() >= a.vocab_size) cut.vocabulary.clear();
  }
  if (!cut.vocabulary.empty()) {
    b.vocab_size = static_cast<uint32_t>(cut.vocabulary.size());
    for (int32_t* id : {&b.pad_token_id, &b.bos_token_id, &b.eos_token_id,
                        &b.decoder_start_token_id}) {
      if (*id >= 0) *id = BlockId(cut.vocabulary, *id);
    }
  }

  std::map<std::string, const TensorMapping*> source;
  for (const TensorMapping& m : spec.tensors) source[m.name] = &m;
  for (const auto& [name, shape] : RequiredTensors(b)) {
    const RoleInfo& role = RoleOf(name);
    const RoleGroupInfo& group = GetRoleGroup(role.group);
    std::string from;
    if (group.scope == RoleScope::kLayer) {
      const size_t at = name.find("layers.0.");
      from = name.substr(0, at) + "layers." + std::to_string(layer) + name.substr(at + 8);
    } else if (role.group == RoleGroup::kEmbeddings) {
      // The last block's vocabulary is the model's: its token table (a tied
      // head's, or the lookup's, made by the first block) is the real one.
      if (cut.first || (cut.last && role.role == Role::kTokenEmbedding)) from = name;
    } else if (role.role == Role::kEncoderRelativeBias || role.role == Role::kDecoderRelativeBias) {
      from = name;  // read by every layer of its stack
    } else if (role.role == Role::kEncoderFinalNorm || role.role == Role::kEncoderFinalNormBias) {
      if (decoder) from = name;  // the cross-attention reads the encoder's normed output
    } else if (cut.last) {
      from = name;
    }
    const auto it = from.empty() ? source.end() : source.find(from);
    if (it != source.end() && it->second == table && !cut.vocabulary.empty()) {
      TensorMapping m = *it->second;  // the rows of the block's ids
      m.name = name;
      m.source_shape = m.ExpectedSourceShape();
      m.shape = shape;
      m.rows.assign(cut.vocabulary.begin(), cut.vocabulary.end());
      cut.spec.tensors.push_back(std::move(m));
      cut.to_block[from] = name;
      continue;
    }
    if (it != source.end() && it->second->shape == shape) {
      TensorMapping m = *it->second;
      m.name = name;
      cut.spec.tensors.push_back(std::move(m));
      cut.to_block[from] = name;
      continue;
    }
    if (!from.empty()) Fail("internal: block of layer ", layer, ": no ", from, " to carry");
    // A stand-in: norms of ones (the stream stays finite), everything else zeros.
    TensorMapping m;
    m.name = name;
    m.shape = shape;
    uint64_t n = 1;
    for (uint32_t d : shape) n *= d;
    const bool norm = role.storage == RoleStorage::kF32 && name.find("norm.weight") != std::string::npos;
    m.values.assign(n, norm ? 1.0f : 0.0f);
    cut.spec.tensors.push_back(std::move(m));
  }
  return cut;
}

}  // namespace convert
}  // namespace octet
