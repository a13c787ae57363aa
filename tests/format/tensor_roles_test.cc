// The tensor role table (runtime/format/tensor_roles.h): groups, names both
// ways, presence and shapes.
#include "format/tensor_roles.h"

#include "format/model.h"

#include <set>
#include <string>

#include <doctest/doctest.h>

namespace octet {
namespace {

RoleArch Llama() {
  RoleArch a;
  a.family = fb::Family::Llama;
  a.structure = fb::Structure::DecoderOnly;
  a.norm = fb::NormKind::RmsNorm;
  a.position = fb::PositionKind::Rope;
  a.vocab = 32;
  a.hidden = 16;
  a.intermediate = 40;
  a.num_layers = 2;
  a.heads = 4;
  a.kv_heads = 2;
  a.head_dim = 4;
  a.gated_ffn = true;
  return a;
}

TEST_CASE("every role is in one group, and the groups cover the table") {
  size_t rows = 0;
  for (size_t g = 0; g < static_cast<size_t>(RoleGroup::kCount); ++g) {
    const RoleGroup group = static_cast<RoleGroup>(g);
    CHECK(GetRoleGroup(group).group == group);
    for (const RoleInfo& r : RolesOf(group)) {
      CHECK(r.group == group);
      CHECK(&GetRole(r.role) == &r);
      ++rows;
    }
  }
  CHECK(rows == kRoleCount);
}

TEST_CASE("role names round-trip in every stack") {
  std::set<std::string> names;
  for (size_t i = 0; i < kRoleCount; ++i) {
    const RoleInfo& r = GetRole(static_cast<Role>(i));
    const bool layer = GetRoleGroup(r.group).scope == RoleScope::kLayer;
    for (LayerStack stack : {LayerStack::kSingle, LayerStack::kEncoder, LayerStack::kDecoder}) {
      if (!layer && stack != LayerStack::kSingle) continue;
      char name[kMaxTensorNameLength];
      REQUIRE(RoleTensorName(name, sizeof(name), r, stack, layer ? 7 : 0));
      CHECK(names.insert(name).second);
      RoleTensor found;
      REQUIRE_MESSAGE(FindRole(name, &found), name);
      CHECK(found.role == r.role);
      CHECK(found.stack == stack);
      CHECK(found.layer == (layer ? 7u : 0u));
    }
  }
  RoleTensor t;
  CHECK_FALSE(FindRole("layers.0.attn.x.weight", &t));
  CHECK_FALSE(FindRole("attn.q.weight", &t));  // a layer suffix without its layer
  CHECK_FALSE(FindRole("layers.0.token_embedding", &t));
  char small[8];
  CHECK_FALSE(RoleTensorName(small, sizeof(small), GetRole(Role::kAttnQ), LayerStack::kSingle, 0));
}

TEST_CASE("presence and shapes follow the architecture") {
  RoleArch a = Llama();
  const auto presence = [&](Role r, LayerStack s = LayerStack::kSingle) {
    return RolePresence(GetRole(r), a, s, 0);
  };
  CHECK(presence(Role::kTokenEmbedding) == Presence::kRequired);
  CHECK(presence(Role::kPositionEmbedding) == Presence::kAbsent);
  CHECK(presence(Role::kFinalNorm) == Presence::kRequired);
  CHECK(presence(Role::kFinalNormBias) == Presence::kOptional);  // beside an RMSNorm
  CHECK(presence(Role::kDecoderFinalNormBias) == Presence::kAbsent);
  CHECK(presence(Role::kFfnGate) == Presence::kRequired);
  CHECK(presence(Role::kFfnUpBias) == Presence::kAbsent);
  CHECK(presence(Role::kCrossQ, LayerStack::kDecoder) == Presence::kAbsent);
  CHECK(presence(Role::kLmHead) == Presence::kRequired);
  a.tied_embeddings = true;
  CHECK(presence(Role::kLmHead) == Presence::kOptional);

  const RoleShape k = ShapeOf(GetRole(Role::kAttnK), a);
  CHECK(k.rank == 2);
  CHECK(k.dims[0] == 8);
  CHECK(k.dims[1] == 16);
  const RoleShape o = ShapeOf(GetRole(Role::kAttnO), a);
  CHECK(o.dims[0] == 16);
  CHECK(o.dims[1] == 16);
  CHECK(ShapeOf(GetRole(Role::kAttnQNorm), a).rank == 1);
  CHECK(GetRole(Role::kFfnDown).input == ProductInput::kFfnHidden);
  CHECK(GetRole(Role::kTokenEmbedding).storage == RoleStorage::kLookup);
  CHECK(GetRole(Role::kLmHead).storage == RoleStorage::kProduct);
}

TEST_CASE("a complete file: the required tensors in file order") {
  RoleArch a = Llama();
  a.num_layers = 1;
  std::string list;
  ForEachRequiredTensor(a, [&](const RoleInfo& r, LayerStack stack, uint32_t layer) {
    char name[kMaxTensorNameLength];
    REQUIRE(RoleTensorName(name, sizeof(name), r, stack, layer));
    list += std::string(list.empty() ? "" : " ") + name;
  });
  CHECK(list ==
        "token_embedding layers.0.attn_norm.weight layers.0.ffn_norm.weight "
        "layers.0.attn.q.weight layers.0.attn.k.weight layers.0.attn.v.weight "
        "layers.0.attn.o.weight layers.0.ffn.gate.weight layers.0.ffn.up.weight "
        "layers.0.ffn.down.weight final_norm.weight lm_head");

  a.structure = fb::Structure::EncoderDecoder;
  a.family = fb::Family::T5;
  a.num_decoder_layers = 1;
  a.position = fb::PositionKind::RelativeBias;
  a.relative_buckets = 32;
  size_t cross = 0, relative = 0;
  ForEachRequiredTensor(a, [&](const RoleInfo& r, LayerStack stack, uint32_t) {
    if (r.group == RoleGroup::kCrossAttention) {
      CHECK(stack == LayerStack::kDecoder);
      ++cross;
    }
    if (r.role == Role::kEncoderRelativeBias || r.role == Role::kDecoderRelativeBias) ++relative;
  });
  CHECK(cross == 5);  // norm, q, k, v, o (no biases)
  CHECK(relative == 2);
}

}  // namespace
}  // namespace octet
