// The BPE model on one pre-token, as tokenizers' models/bpe (Word::merge_all
// without dropout): the pre-token's characters (or raw bytes, byte-level) as
// symbol ids, unknown ones through byte fallback or unk, then repeatedly the
// adjacent pair of lowest merge rank merged (leftmost first among equals),
// with a min-heap of candidate pairs in the workspace; a popped candidate
// whose pair has changed since is skipped.
#include <cstring>

#include "text/tok_tables.h"
#include "text/tokenizer_impl.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

struct Symbol {
  int32_t id;    // -1 once merged into the symbol on its left
  int32_t prev;  // -1 at the start
  int32_t next;  // -1 at the end
  uint32_t pad;
};
static_assert(sizeof(Symbol) == 16, "the workspace plans 16 bytes a symbol");

struct Candidate {
  uint32_t rank;
  uint32_t pos;     // the left symbol
  uint32_t merged;  // what the pair merges into
  int32_t left, right;  // the pair's ids when pushed
};
static_assert(sizeof(Candidate) == 20, "the workspace plans 20 bytes a candidate");

bool Before(const Candidate& a, const Candidate& b) {
  return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos;
}

class Heap {
 public:
  Heap(Candidate* data, size_t cap) : data_(data), cap_(cap) {}
  bool empty() const { return n_ == 0; }
  bool Push(const Candidate& c) {
    if (n_ == cap_) return false;
    size_t i = n_++;
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!Before(c, data_[parent])) break;
      data_[i] = data_[parent];
      i = parent;
    }
    data_[i] = c;
    return true;
  }
  Candidate Pop() {
    const Candidate top = data_[0];
    const Candidate last = data_[--n_];
    size_t i = 0;
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n_) break;
      if (child + 1 < n_ && Before(data_[child + 1], data_[child])) ++child;
      if (!Before(data_[child], last)) break;
      data_[i] = data_[child];
      i = child;
    }
    if (n_ > 0) data_[i] = last;
    return top;
  }

 private:
  Candidate* data_;
  size_t cap_;
  size_t n_ = 0;
};

}  // namespace

Status TokenizerImpl::Bpe(EncodeState& st, const uint8_t* w, size_t n) const {
  if (model->ignore_merges()) {
    const int32_t whole = Lookup(w, n);
    if (whole >= 0) return Emit(st, whole);
  }
  uint8_t* base = st.ws->memory_.get();
  Symbol* sym = reinterpret_cast<Symbol*>(base + st.layout.off_symbols);
  const size_t cap = st.layout.symbols;
  size_t count = 0;
  bool overflow = false;
  const auto add = [&](int32_t id) {
    if (count == cap) {
      overflow = true;
      return;
    }
    sym[count] = Symbol{id, static_cast<int32_t>(count) - 1, -1, 0};
    if (count > 0) sym[count - 1].next = static_cast<int32_t>(count);
    ++count;
  };
  // A pending unk (fuse_unk joins a run of unknown characters into one).
  bool unk_pending = false;
  const auto unknown = [&]() {
    if (unk_id < 0) return;  // no unk token: the character is dropped
    if (unk_pending && model->fuse_unk()) return;
    if (unk_pending) add(unk_id);
    unk_pending = true;
  };
  const auto known = [&](int32_t id) {
    if (unk_pending) {
      add(unk_id);
      unk_pending = false;
    }
    add(id);
  };

  if (byte_level) {
    for (size_t i = 0; i < n; ++i) {
      const int32_t id = byte_ids[w[i]];
      if (id >= 0) {
        known(id);
      } else {
        unknown();
      }
    }
  } else {
    const flatbuffers::String* prefix = model->continuing_subword_prefix();
    const flatbuffers::String* suffix = model->end_of_word_suffix();
    const auto* pre = prefix ? reinterpret_cast<const uint8_t*>(prefix->data()) : nullptr;
    const auto* suf = suffix ? reinterpret_cast<const uint8_t*>(suffix->data()) : nullptr;
    const size_t pre_n = prefix ? prefix->size() : 0, suf_n = suffix ? suffix->size() : 0;
    for (size_t i = 0; i < n;) {
      const size_t at = i;
      Utf8Decode(reinterpret_cast<const char*>(w), &i);
      const int32_t id = Lookup3(pre, at > 0 ? pre_n : 0, w + at, i - at, suf, i == n ? suf_n : 0);
      if (id >= 0) {
        known(id);
        continue;
      }
      if (model->byte_fallback()) {
        bool all = true;
        for (size_t k = at; k < i; ++k) all = all && byte_ids[w[k]] >= 0;
        if (all) {
          // As tokenizers does: the bytes go in without flushing a pending unk.
          for (size_t k = at; k < i; ++k) add(byte_ids[w[k]]);
          continue;
        }
      }
      unknown();
    }
  }
  if (unk_pending) add(unk_id);
  if (overflow) return OutgrewWorkspace("BPE model");

  if (merges != nullptr && count > 1) {
    Heap heap(reinterpret_cast<Candidate*>(base + st.layout.off_heap), st.layout.heap);
    TokMerge m;
    const auto push = [&](int32_t pos) -> bool {
      const int32_t next = sym[pos].next;
      if (next < 0) return true;
      if (!MayMerge(static_cast<uint32_t>(sym[pos].id), static_cast<uint32_t>(sym[next].id)) ||
          !TokFindMerge(merges, static_cast<uint32_t>(sym[pos].id),
                        static_cast<uint32_t>(sym[next].id), &m)) {
        return true;
      }
      return heap.Push(Candidate{m.rank, static_cast<uint32_t>(pos), m.merged, sym[pos].id, sym[next].id});
    };
    bool ok = true;
    for (size_t i = 0; i + 1 < count; ++i) ok = ok && push(static_cast<int32_t>(i));
    while (ok && !heap.empty()) {
      const Candidate top = heap.Pop();
      Symbol& left = sym[top.pos];
      if (left.id < 0 || left.next < 0) continue;
      Symbol& right = sym[left.next];
      // tokenizers checks that the pair now there merges into the same id; an
      // unchanged pair does without the lookup.
      if ((left.id != top.left || right.id != top.right) &&
          (!TokFindMerge(merges, static_cast<uint32_t>(left.id), static_cast<uint32_t>(right.id),
                         &m) ||
           m.merged != top.merged)) {
        continue;  // stale
      }
      left.id = static_cast<int32_t>(top.merged);
      right.id = -1;
      left.next = right.next;
      if (right.next >= 0) sym[right.next].prev = static_cast<int32_t>(top.pos);
      if (left.prev >= 0) ok = push(left.prev);
      ok = ok && push(static_cast<int32_t>(top.pos));
    }
    if (!ok) return Status(StatusCode::kInternal, "tokenizer: BPE heap outgrew the workspace");
  }
  for (int32_t pos = count > 0 ? 0 : -1; pos >= 0; pos = sym[pos].next) {
    OCTET_RETURN_IF_ERROR(Emit(st, sym[pos].id));
  }
  return Status::Ok();
}

}  // namespace text
}  // namespace octet
