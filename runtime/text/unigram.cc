// The Unigram model on one pre-token, as tokenizers' models/unigram
// (encode_optimized): Viterbi over every vocabulary piece that starts at each
// character (scores summed in double), a character with no single-character
// piece costs unk_score, runs of unk fused; then each piece's id, a fused
// unknown run through byte fallback or unk.
//
// Over a SentencePiece model with another vocabulary's ids (Marian), the
// lattice probes its own table of the model's pieces and sums in float, as
// SentencePiece does; a piece the vocabulary lacks is emitted as unk, and a
// fused unknown run is looked up in the whole vocabulary, as MarianTokenizer
// maps SentencePiece's pieces to vocab.json's ids.
#include <cstring>

#include "text/tok_tables.h"
#include "text/tokenizer_impl.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

struct Node {
  double score;
  int32_t starts_at;  // -1: not reached
  int32_t id;
};
static_assert(sizeof(Node) == 16, "the workspace plans 16 bytes a node");

}  // namespace

Status TokenizerImpl::Unigram(EncodeState& st, const uint8_t* w, size_t n) const {
  if (n + 1 > st.layout.symbols) return Status(StatusCode::kInternal, "tokenizer: lattice outgrew the workspace");
  Node* best = reinterpret_cast<Node*>(st.ws->memory_.get() + st.layout.off_symbols);
  for (size_t i = 0; i <= n; ++i) best[i] = Node{0.0, -1, -1};
  const auto* scores = model->scores_f64();
  const double unk_score = model->unk_score();
  for (size_t start = 0; start < n;) {
    const double here = best[start].score;
    size_t next_char = start;
    Utf8Decode(reinterpret_cast<const char*>(w), &next_char);
    bool single = false;
    size_t end = start;
    while (end < n && end - start < lattice_max_bytes) {
      Utf8Decode(reinterpret_cast<const char*>(w), &end);
      if (end - start > lattice_max_bytes) break;
      int32_t id;
      bool extend = true;
      if (lattice_prefix.empty()) {
        id = LatticeLookup(w + start, end - start);
      } else {
        const uint32_t h = TokHash(w + start, end - start);
        id = LatticeLookupHashed(w + start, end - start, h);
        extend = MayExtend(h);
      }
      if (id < 0) {
        if (!extend) break;
        continue;
      }
      const double score = scores->Get(static_cast<uint32_t>(id));
      const double candidate =
          float_lattice ? static_cast<double>(static_cast<float>(score) + static_cast<float>(here))
                        : score + here;
      Node& target = best[end];
      if (target.starts_at < 0 || candidate > target.score) {
        target = Node{candidate, static_cast<int32_t>(start), id};
      }
      if (end == next_char) single = true;
      if (!extend) break;
    }
    if (!single) {
      Node& target = best[next_char];
      const double candidate =
          float_lattice ? static_cast<double>(static_cast<float>(unk_score) + static_cast<float>(here))
                        : unk_score + here;
      if (target.starts_at < 0 || candidate > target.score) {
        target = Node{candidate, static_cast<int32_t>(start), unk_id};
      }
    }
    start = next_char;
  }
  // The best path, walked back from the end: its piece ends, then emitted in order.
  size_t count = 0;
  for (size_t end = n; end > 0; end = static_cast<size_t>(best[end].starts_at)) ++count;
  // The ends go to the heap region (3 uint32 per planned heap entry).
  uint32_t* ends = reinterpret_cast<uint32_t*>(st.ws->memory_.get() + st.layout.off_heap);
  if (count > st.layout.heap * 3) return Status(StatusCode::kInternal, "tokenizer: lattice path");
  size_t k = count;
  for (size_t end = n; end > 0; end = static_cast<size_t>(best[end].starts_at)) ends[--k] = static_cast<uint32_t>(end);
  const auto emit_piece = [&](size_t b, size_t e, int32_t id) -> Status {
    if (id >= 0 && static_cast<uint32_t>(id) >= vocab_size) return Emit(st, unk_id);  // lattice-only
    if (id >= 0 && !(unk_id >= 0 && id == unk_id)) return Emit(st, id);
    // A fused run of unknown characters: its own token if it is one, else bytes, else unk.
    const int32_t whole = Lookup(w + b, e - b);
    if (whole >= 0) return Emit(st, whole);
    if (model->byte_fallback()) {
      bool all = true;
      for (size_t i = b; i < e; ++i) all = all && byte_ids[w[i]] >= 0;
      if (all) {
        for (size_t i = b; i < e; ++i) OCTET_RETURN_IF_ERROR(Emit(st, byte_ids[w[i]]));
        return Status::Ok();
      }
    }
    if (unk_id < 0) return Status(StatusCode::kInvalidArgument, "tokenizer: a piece has no token and the model has no unk");
    return Emit(st, unk_id);
  };
  size_t run_begin = 0;
  bool in_run = false;
  size_t prev_end = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t e = ends[i];
    const size_t b = prev_end;
    const int32_t id = best[e].id;
    const bool is_unk = unk_id >= 0 && id == unk_id;
    if (is_unk) {
      if (!in_run) run_begin = b;
      in_run = true;
    } else {
      if (in_run) OCTET_RETURN_IF_ERROR(emit_piece(run_begin, b, -1));
      in_run = false;
      OCTET_RETURN_IF_ERROR(emit_piece(b, e, id));
    }
    prev_end = e;
  }
  if (in_run) OCTET_RETURN_IF_ERROR(emit_piece(run_begin, n, -1));
  return Status::Ok();
}

}  // namespace text
}  // namespace octet
