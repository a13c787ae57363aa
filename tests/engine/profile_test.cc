// ForwardProfile's attention tiles (`octet bench --profile`): the count of
// (16-query block, key tile) pairs a pass visits, per head, against a brute
// force over every (query, key) pair of the attention mask's definition
// (kernels/attention_params.h): a tile is visited when some query of the block
// sees some key of the tile. Windowed layers count as local_attention, the
// others as attention; a step counts its one query.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/session.h"
#include "support/loaded_model.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::LoadedModel;
using testing::TinyModelOptions;

struct Mask {
  bool causal = true;
  uint32_t window = 0;  // 0: none
};

// Tiles of one call (q_len queries from position q_pos0, kv_len keys of which
// `valid` are real), per head, by brute force.
void BruteTiles(const Mask& m, size_t q_len, size_t q_pos0, size_t kv_len, size_t valid,
                size_t tile, double* visited, double* full) {
  for (size_t i0 = 0; i0 < q_len; i0 += kProfileQueryRows) {
    for (size_t t0 = 0; t0 < kv_len; t0 += tile) {
      bool seen = false;
      for (size_t i = i0; i < q_len && i < i0 + kProfileQueryRows && !seen; ++i) {
        const size_t p = q_pos0 + i;
        for (size_t j = t0; j < kv_len && j < t0 + tile && !seen; ++j) {
          seen = j < valid && (!m.causal || j <= p) && (m.window == 0 || j + m.window > p);
        }
      }
      *visited += seen ? 1 : 0;
      *full += 1;
    }
  }
}

TEST_CASE("profile: attention tiles visited, local and global, prefill and steps") {
  constexpr uint32_t kWindow = 20, kTile = 16, kHeads = 2;
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    TinyModelOptions o;
    o.family = fb::Family::Llama;
    o.int8 = int8;
    o.packed = int8;
    o.layers = 3;
    o.hidden = 32;
    // Layers 0 and 2 slide, layer 1 is global.
    LoadedModel loaded(o, [](fb::ArchitectureT& a) {
      a.attention->sliding_window = kWindow;
      a.attention->sliding_layers = {true, false, true};
    });
    const std::vector<uint32_t> lengths = {100, 37};
    const uint32_t seq = 100;
    std::vector<int32_t> ids(lengths.size() * seq, 0);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7 + 3) % o.vocab);
    SessionLimits limits;
    limits.max_batch = 2;
    limits.max_seq = seq + 4;
    limits.attention_tile = kTile;
    limits.threads = 2;
    Result<Session> session = Session::Create(loaded.model, limits);
    REQUIRE(session.ok());
    ForwardProfile profile;
    session->SetProfile(&profile);
    REQUIRE(session->Run(ids.data(), lengths.data(), 2, seq).ok());

    AttentionTiles local, global;  // expected
    for (uint32_t valid : lengths) {
      BruteTiles({true, kWindow}, seq, 0, seq, valid, kTile, &local.visited, &local.full);
      BruteTiles({true, 0}, seq, 0, seq, valid, kTile, &global.visited, &global.full);
    }
    // Two local layers, one global, kHeads heads each.
    CHECK(profile.local_attention_tiles.visited == 2 * kHeads * local.visited);
    CHECK(profile.local_attention_tiles.full == 2 * kHeads * local.full);
    CHECK(profile.attention_tiles.visited == kHeads * global.visited);
    CHECK(profile.attention_tiles.full == kHeads * global.full);
    // The window skips most tiles; causal masking about half.
    CHECK(profile.local_attention_tiles.visited < 0.5 * profile.local_attention_tiles.full);
    CHECK(profile.attention_tiles.visited < 0.7 * profile.attention_tiles.full);
    CHECK(profile.calls[static_cast<size_t>(OpKind::kLocalAttention)] == 2 * 2);
    CHECK(profile.calls[static_cast<size_t>(OpKind::kAttention)] == 2);
    CHECK(profile.nanos[static_cast<size_t>(OpKind::kLocalAttention)] > 0);

    // One step: each sequence's next query against its keys so far (the padded
    // sequence continues from its length).
    profile.Clear();
    const int32_t next[2] = {5, 6};
    REQUIRE(session->Step(next, 2).ok());
    AttentionTiles step_local, step_global;
    for (uint32_t valid : lengths) {
      BruteTiles({true, kWindow}, 1, valid, valid + 1, valid + 1, kTile, &step_local.visited,
                 &step_local.full);
      BruteTiles({true, 0}, 1, valid, valid + 1, valid + 1, kTile, &step_global.visited,
                 &step_global.full);
    }
    CHECK(profile.local_attention_tiles.visited == 2 * kHeads * step_local.visited);
    CHECK(profile.attention_tiles.visited == kHeads * step_global.visited);
    CHECK(profile.attention_tiles.full == kHeads * step_global.full);
  }
}

}  // namespace
}  // namespace octet
