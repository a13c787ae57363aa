// The chat template renderer's internals, shared by its files: output sinks,
// call arguments, scopes and the ChatRenderer class (a tree-walking
// interpreter over the parser's nodes). All memory comes from the caller's
// scratch arena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/status.h"
#include "text/chat_template.h"
#include "text/chat_template_internal.h"
#include "text/chat_template_value.h"

namespace octet::text::chat_render {

constexpr int kMaxFrames = 256;
constexpr int kMaxValueDepth = 64;
constexpr size_t kMaxArgs = 8;
constexpr int64_t kMaxRange = 100000;  // jinja2's sandbox MAX_RANGE

// ------------------------------------------------------------------ sinks ---

class Sink {
 public:
  virtual bool Write(const char* s, size_t n) = 0;
  bool Put(const char* s) { return Write(s, std::strlen(s)); }

 protected:
  ~Sink() = default;
};

// The caller's output buffer.
class BufferSink final : public Sink {
 public:
  BufferSink(char* buf, size_t cap) : buf_(buf), cap_(cap) {}
  bool Write(const char* s, size_t n) override {
    if (n > cap_ - size_) return false;
    if (n > 0) std::memcpy(buf_ + size_, s, n);
    size_ += n;
    return true;
  }
  size_t size() const { return size_; }

 private:
  char* buf_;
  size_t cap_;
  size_t size_ = 0;
};

// A string built in place at the arena's top; nothing else may allocate from
// the arena until Finish().
class TopSink final : public Sink {
 public:
  explicit TopSink(ScratchArena* arena) : arena_(arena), start_(arena->top()) {}
  bool Write(const char* s, size_t n) override {
    if (n > arena_->free_bytes() - size_) return false;
    if (n > 0) std::memcpy(start_ + size_, s, n);
    size_ += n;
    return true;
  }
  Value Finish() {
    arena_->Commit(size_);
    return Value::Str(start_, size_);
  }

 private:
  ScratchArena* arena_;
  char* start_;
  size_t size_ = 0;
};

// Output captured while other values are being allocated (macro bodies,
// block sets): a chain of arena chunks, joined at the end.
class ChunkSink final : public Sink {
 public:
  // *escape_mark is raised past every chunk: the chunks outlive loop iterations.
  ChunkSink(ScratchArena* arena, size_t* escape_mark) : arena_(arena), escape_mark_(escape_mark) {}
  bool Write(const char* s, size_t n) override {
    while (n > 0) {
      if (tail_ == nullptr || tail_->used == tail_->cap) {
        const size_t cap = n > 240 ? n : 240;
        auto* chunk = static_cast<Chunk*>(arena_->Alloc(sizeof(Chunk) + cap));
        if (chunk == nullptr) return false;
        *escape_mark_ = arena_->used();
        chunk->next = nullptr;
        chunk->used = 0;
        chunk->cap = cap;
        (tail_ == nullptr ? head_ : tail_->next) = chunk;
        tail_ = chunk;
      }
      const size_t take = n < tail_->cap - tail_->used ? n : tail_->cap - tail_->used;
      std::memcpy(tail_->data() + tail_->used, s, take);
      tail_->used += take;
      total_ += take;
      s += take;
      n -= take;
    }
    return true;
  }
  bool Finish(Value* out) {
    if (head_ != nullptr && head_->next == nullptr) {
      *out = Value::Str(head_->data(), head_->used);
      return true;
    }
    char* joined = arena_->AllocArray<char>(total_);
    if (joined == nullptr) return false;
    size_t at = 0;
    for (Chunk* c = head_; c != nullptr; c = c->next) {
      std::memcpy(joined + at, c->data(), c->used);
      at += c->used;
    }
    *out = Value::Str(joined, total_);
    return true;
  }

 private:
  struct Chunk {
    Chunk* next;
    size_t used, cap;
    char* data() { return reinterpret_cast<char*>(this + 1); }
  };
  ScratchArena* arena_;
  size_t* escape_mark_;
  Chunk* head_ = nullptr;
  Chunk* tail_ = nullptr;
  size_t total_ = 0;
};

// -------------------------------------------------------- text utilities ---

inline size_t CodePointCount(const char* s, size_t n) {
  size_t count = 0;
  for (size_t k = 0; k < n;) {
    DecodeLenient(s, n, &k);
    ++count;
  }
  return count;
}

inline bool IsAscii(const char* s, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    if (static_cast<uint8_t>(s[k]) >= 0x80) return false;
  }
  return true;
}

// Byte offset of code point `index` (index <= count).
inline size_t CodePointOffset(const char* s, size_t n, size_t index) {
  size_t k = 0;
  for (size_t c = 0; c < index && k < n; ++c) DecodeLenient(s, n, &k);
  return k;
}

inline char AsciiUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }
inline char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
inline bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Python's float repr: the shortest digits that round-trip (chat_template_strings.cc).
void FormatFloat(double v, char* out, size_t cap);

struct Args {
  Value pos[kMaxArgs];
  size_t num_pos = 0;
  const char* kw_name[kMaxArgs];
  size_t kw_len[kMaxArgs];
  Value kw[kMaxArgs];
  size_t num_kw = 0;

  // Positional `index`, else keyword `name`, else nullptr.
  const Value* Get(size_t index, const char* name) const {
    if (index < num_pos) return &pos[index];
    return Keyword(name);
  }
  const Value* Keyword(const char* name) const {
    const size_t len = std::strlen(name);
    for (size_t k = 0; k < num_kw; ++k) {
      if (kw_len[k] == len && std::memcmp(kw_name[k], name, len) == 0) return &kw[k];
    }
    return nullptr;
  }
};

struct Binding {
  const char* name;
  size_t len;
  Value value;
  Binding* next;
};

struct Frame {
  Binding* head;
  bool barrier;  // a macro's frame: lookups skip to the template's frame
};

enum class Flow : uint8_t { kNormal, kBreak, kContinue };

// Case mappings of the upper/lower/capitalize/title filters and methods
// (jinja2's title filter and str.title split words differently).
enum class CaseMap : uint8_t { kUpper, kLower, kCapitalize, kTitleFilter, kTitleMethod };

class ChatRenderer {
 public:
  ChatRenderer(const ChatTemplateNode* nodes, const char* strings, const ChatRenderInput& input,
               const ChatRenderLimits& limits, ScratchArena* arena)
      : nodes_(nodes), strings_(strings), input_(input), limits_(limits), arena_(arena) {}

  Status Render(int32_t root, BufferSink* out);

 private:
  const ChatTemplateNode& N(int32_t k) const { return nodes_[static_cast<size_t>(k)]; }
  const char* Str(PoolStr s) const { return strings_ + s.offset; }

  Status Fail(int32_t node, const char* format, ...) __attribute__((format(printf, 3, 4)));
  Status OutOfScratch() const {
    return Status::Error(StatusCode::kOutOfMemory,
                         "chat template: the scratch arena of %zu bytes is too small",
                         arena_->size());
  }
  Status Step(int32_t node) {
    if (++steps_ > limits_.max_steps) return Fail(node, "the render exceeded its step limit");
    return Status::Ok();
  }
  Status Write(Sink* sink, const char* s, size_t n) {
    if (!sink->Write(s, n)) return sink == out_ ? OutputFull() : OutOfScratch();
    return Status::Ok();
  }
  Status OutputFull() const {
    return Status(StatusCode::kOutOfMemory, "chat template: the output buffer is too small");
  }

  // Statements
  Status Exec(int32_t first, Sink* sink);
  Status ExecFor(int32_t node, Sink* sink);
  Status ExecSet(int32_t node);
  Status Assign(int32_t target, const Value& value);

  // Scopes
  Status PushFrame(int32_t node, bool barrier);
  // A popped frame's bindings are referenced by nothing else: they are
  // recycled, so a long loop does not grow the scratch per iteration.
  void PopFrame() {
    Frame& frame = frames_[--num_frames_];
    while (frame.head != nullptr) {
      Binding* b = frame.head;
      frame.head = b->next;
      b->next = free_bindings_;
      free_bindings_ = b;
    }
  }
  Status SetVar(const char* name, size_t len, const Value& value);
  void ReleaseScratch(size_t mark) {
    Binding** link = &free_bindings_;
    while (*link != nullptr) {
      if (reinterpret_cast<uintptr_t>(*link) >= reinterpret_cast<uintptr_t>(arena_->top()) -
                                                    (arena_->used() - mark)) {
        *link = (*link)->next;
      } else {
        link = &(*link)->next;
      }
    }
    arena_->Reset(mark);
  }
  bool Lookup(const NameExpr& name, Value* out) const;

  // Expressions
  Status Eval(int32_t node, Value* out);
  Status EvalArgs(int32_t first_arg, Args* args);
  Status EvalCall(int32_t node, Value* out);
  Status EvalCompare(int32_t node, Value* out);
  Status EvalFilterOrTest(int32_t node, Value* out);
  Status EvalUnary(int32_t node, Value* out);
  Status EvalDict(int32_t node, Value* out);
  Status Binary(int32_t node, BinaryOp op, const Value& a, const Value& b, Value* out);
  Status Arithmetic(int32_t node, BinaryOp op, const Value& a, const Value& b, Value* out);
  Status Concat(const Value& a, const Value& b, Value* out);
  Status Repeat(int32_t node, const Value& seq, const Value& times, Value* out);
  Status UnsupportedOperands(int32_t node, BinaryOp op, const Value& a, const Value& b);
  // `id` is AttrIdOf(name, len), resolved by the caller.
  Status GetAttr(int32_t node, const Value& obj, const char* name, size_t len, AttrId id,
                 Value* out);
  Status GetItem(int32_t node, const Value& obj, const Value& key, Value* out);
  Status Slice(int32_t node, const Value& obj, const Value* start, const Value* stop,
               const Value* step, Value* out);
  Status Contains(int32_t node, const Value& container, const Value& item, bool* out);
  Status Less(int32_t node, const Value& a, const Value& b, bool* out);
  bool Equals(const Value& a, const Value& b, int depth = 0) const;
  static bool Truthy(const Value& v);

  // Calls
  Status CallMacro(int32_t node, const Value& macro, const Args& args, Value* out);
  Status CallBuiltin(int32_t node, int64_t id, const Args& args, Value* out);
  Status Range(int32_t node, const Args& args, Value* out);
  Status NewDictFromKeywords(const Args& args, Value* out);
  Status NewNamespace(const Args& args, Value* out);

  // Methods (*handled is false for a method `obj` does not have).
  Status CallMethod(int32_t node, const Value& obj, const GetAttrExpr& method, const Args& args,
                    bool* handled, Value* out);
  Status StrStrip(int32_t node, const Value& s, bool left, bool right, const Args& args,
                  Value* out);
  Status StrSplit(int32_t node, const Value& s, const Args& args, Value* out);
  Status StrStartsOrEndsWith(int32_t node, const Value& s, const GetAttrExpr& method,
                             const Args& args, Value* out);
  Status StrReplace(int32_t node, const Value& s, const Args& args, Value* out);
  Status DictView(const Value& dict, AttrId view, Value* out);
  Status DictGet(int32_t node, const Value& dict, const Args& args, Value* out);

  // Filters and tests
  Status ApplyFilter(int32_t node, FilterId id, const Value& value, const Args& args, Value* out);
  Status FilterAbs(int32_t node, const Value& value, Value* out);
  Status FilterCase(int32_t node, const Value& value, CaseMap mode, Value* out);
  Status FilterLength(int32_t node, const Value& value, Value* out);
  Status FilterDefault(const Value& value, const Args& args, Value* out);
  Status FilterFirstOrLast(int32_t node, const Value& value, bool first, Value* out);
  Status FilterIndent(int32_t node, const Value& value, const Args& args, Value* out);
  Status FilterItems(int32_t node, const Value& value, Value* out);
  Status FilterJoin(int32_t node, const Value& value, const Args& args, Value* out);
  Status FilterList(int32_t node, const Value& value, bool reverse, Value* out);
  Status FilterMap(int32_t node, const Value& value, const Args& args, Value* out);
  Status FilterReplace(int32_t node, const Value& value, const Args& args, Value* out);
  Status FilterTojson(int32_t node, const Value& value, const Args& args, Value* out);
  Status FilterTrim(int32_t node, const Value& value, const Args& args, Value* out);
  Status SelectAttr(int32_t node, const Value& seq, const Args& args, bool reject, Value* out);
  Status ApplyTest(int32_t node, TestId id, const Value& value, const Args& args, bool* out);
  Status TestCase(int32_t node, const Value& value, bool lower, bool* out);
  bool SameAs(const Value& value, const Value& arg) const;

  // Conversions
  Status ToStr(int32_t node, const Value& v, Value* out);
  Status WriteStr(int32_t node, const Value& v, Sink* sink, int depth = 0);
  Status WriteRepr(int32_t node, const Value& v, Sink* sink, int depth);
  Status WriteJson(int32_t node, const Value& v, Sink* sink, int indent, const Value& item_sep,
                   const Value& key_sep, bool sort_keys, int depth);
  Status WriteJsonString(const Value& v, Sink* sink);
  Status WriteJsonDict(int32_t node, const Value& v, Sink* sink, int indent,
                       const Value& item_sep, const Value& key_sep, bool sort_keys, int depth);
  Status JsonNewline(Sink* sink, int indent, int level);
  Status Items(int32_t node, const Value& v, const Value** items, size_t* n);
  Status NewString(size_t n, char** out);
  Status NewList(size_t n, bool tuple, Value* out);
  Status Strip(int32_t node, const Value& s, const Value* chars, bool left, bool right,
               Value* out);
  Status Replace(int32_t node, const Value& s, const Value& old, const Value& with, int64_t count,
                 Value* out);
  Status Split(int32_t node, const Value& s, const Value* sep, int64_t maxsplit, Value* out);
  Status MapCase(const Value& s, CaseMap mode, Value* out);
  Status Indent(int32_t node, const Value& s, const Args& args, Value* out);
  Status ToInt(int32_t node, const Value& v, const Value* def, Value* out);
  Status ToFloat(int32_t node, const Value& v, const Value* def, Value* out);
  Status Strftime(int32_t node, const Value& format, Value* out);
  Status TypeName(const Value& v, const char** name) const;

  const ChatTemplateNode* nodes_;
  const char* strings_;
  const ChatRenderInput& input_;
  const ChatRenderLimits& limits_;
  ScratchArena* arena_;
  BufferSink* out_ = nullptr;
  Frame frames_[kMaxFrames];
  int num_frames_ = 0;
  uint64_t steps_ = 0;
  uint32_t call_depth_ = 0;
  Flow flow_ = Flow::kNormal;
  Binding* free_bindings_ = nullptr;
  // The scratch below this mark may be referenced from outside the current
  // loop iteration (namespace attributes, captured output); above it, what an
  // iteration allocated is released when the iteration ends.
  size_t escape_mark_ = 0;
  Value messages_;
};

inline const char* KindName(const Value& v) {
  switch (v.kind) {
    case VKind::kUndefined: return "Undefined";
    case VKind::kNone: return "NoneType";
    case VKind::kBool: return "bool";
    case VKind::kInt: return "int";
    case VKind::kFloat: return "float";
    case VKind::kString: return "str";
    case VKind::kList: return v.list->tuple ? "tuple" : "list";
    case VKind::kDict: return "dict";
    case VKind::kNamespace: return "Namespace";
    case VKind::kMacro: return "Macro";
    case VKind::kLoop: return "LoopContext";
    case VKind::kMethod: return "method";
    case VKind::kBuiltin: return "function";
  }
  return "object";
}

inline double AsDouble(const Value& v) {
  return v.kind == VKind::kFloat ? v.f : v.kind == VKind::kBool ? (v.b ? 1.0 : 0.0)
                                                                 : static_cast<double>(v.i);
}
inline int64_t AsInt(const Value& v) { return v.kind == VKind::kBool ? (v.b ? 1 : 0) : v.i; }
inline bool IsIntLike(const Value& v) { return v.kind == VKind::kInt || v.kind == VKind::kBool; }


}  // namespace octet::text::chat_render
