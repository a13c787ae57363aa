// Chat template rendering: a tree-walking interpreter with jinja2's semantics
// for the subset the parser accepts (Python truthiness, equality and
// arithmetic; jinja2's default Undefined; the sandbox's getattr/getitem
// fallbacks; HF's tojson). All memory comes from the caller's scratch arena.
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "text/chat_template.h"
#include "text/chat_template_internal.h"
#include "text/chat_template_value.h"

namespace octet::text {
namespace {

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

size_t CodePointCount(const char* s, size_t n) {
  size_t count = 0;
  for (size_t k = 0; k < n;) {
    DecodeLenient(s, n, &k);
    ++count;
  }
  return count;
}

bool IsAscii(const char* s, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    if (static_cast<uint8_t>(s[k]) >= 0x80) return false;
  }
  return true;
}

// Byte offset of code point `index` (index <= count).
size_t CodePointOffset(const char* s, size_t n, size_t index) {
  size_t k = 0;
  for (size_t c = 0; c < index && k < n; ++c) DecodeLenient(s, n, &k);
  return k;
}

char AsciiUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }
char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Python's float repr: the shortest digits that round-trip, fixed notation
// for exponents in [-4, 16), else d.ddde+XX.
void FormatFloat(double v, char* out, size_t cap) {
  if (std::isnan(v)) {
    std::snprintf(out, cap, "nan");
    return;
  }
  if (std::isinf(v)) {
    std::snprintf(out, cap, v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[40];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // buf: [-]d.ddde[+-]XX
  const bool negative = buf[0] == '-';
  const char* p = buf + (negative ? 1 : 0);
  char digits[24];
  size_t nd = 0;
  for (; *p != 'e' && *p != 0; ++p) {
    if (*p != '.') digits[nd++] = *p;
  }
  const int exp = std::atoi(p + 1);
  while (nd > 1 && digits[nd - 1] == '0') --nd;
  size_t o = 0;
  auto put = [&](char c) {
    if (o + 1 < cap) out[o++] = c;
  };
  if (negative) put('-');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      put('0');
      put('.');
      for (int k = 0; k < -exp - 1; ++k) put('0');
      for (size_t k = 0; k < nd; ++k) put(digits[k]);
    } else {
      const size_t int_digits = static_cast<size_t>(exp) + 1;
      for (size_t k = 0; k < int_digits; ++k) put(k < nd ? digits[k] : '0');
      put('.');
      if (nd > int_digits) {
        for (size_t k = int_digits; k < nd; ++k) put(digits[k]);
      } else {
        put('0');
      }
    }
  } else {
    put(digits[0]);
    if (nd > 1) {
      put('.');
      for (size_t k = 1; k < nd; ++k) put(digits[k]);
    }
    char e[16];
    std::snprintf(e, sizeof(e), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    for (const char* q = e; *q != 0; ++q) put(*q);
  }
  out[o < cap ? o : cap - 1] = 0;
}

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

}  // namespace

class ChatRenderer {
 public:
  ChatRenderer(const ChatTemplateNode* nodes, const char* strings, const ChatRenderInput& input,
               const ChatRenderLimits& limits, ScratchArena* arena)
      : nodes_(nodes), strings_(strings), input_(input), limits_(limits), arena_(arena) {}

  Status Render(int32_t root, BufferSink* out);

 private:
  const ChatTemplateNode& N(int32_t k) const { return nodes_[static_cast<size_t>(k)]; }
  const char* Str(const ChatTemplateNode& node) const { return strings_ + node.str; }

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
  bool Lookup(const char* name, size_t len, Value* out) const;

  // Expressions
  Status Eval(int32_t node, Value* out);
  Status EvalArgs(int32_t first_arg, Args* args);
  Status EvalCall(int32_t node, Value* out);
  Status EvalCompare(int32_t node, Value* out);
  Status EvalFilterOrTest(int32_t node, Value* out);
  Status Binary(int32_t node, uint16_t op, const Value& a, const Value& b, Value* out);
  Status GetAttr(int32_t node, const Value& obj, const char* name, size_t len, Value* out);
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
  Status CallMethod(int32_t node, const Value& obj, const char* name, size_t len,
                    const Args& args, bool* handled, Value* out);
  Status ApplyFilter(int32_t node, uint16_t id, const Value& value, const Args& args, Value* out);
  Status ApplyTest(int32_t node, uint16_t id, const Value& value, const Args& args, bool* out);
  Status SelectAttr(int32_t node, const Value& seq, const Args& args, bool reject, Value* out);

  // Conversions
  Status ToStr(int32_t node, const Value& v, Value* out);
  Status WriteStr(int32_t node, const Value& v, Sink* sink, int depth = 0);
  Status WriteRepr(int32_t node, const Value& v, Sink* sink, int depth);
  Status WriteJson(int32_t node, const Value& v, Sink* sink, int indent, const Value& item_sep,
                   const Value& key_sep, bool sort_keys, int depth);
  Status Items(int32_t node, const Value& v, const Value** items, size_t* n);
  Status NewString(size_t n, char** out);
  Status NewList(size_t n, bool tuple, Value* out);
  Status Strip(int32_t node, const Value& s, const Value* chars, bool left, bool right,
               Value* out);
  Status Replace(int32_t node, const Value& s, const Value& old, const Value& with, int64_t count,
                 Value* out);
  Status Split(int32_t node, const Value& s, const Value* sep, int64_t maxsplit, Value* out);
  Status MapCase(const Value& s, int mode, Value* out);
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

namespace {

const char* KindName(const Value& v) {
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

bool NameIs(const char* name, size_t len, const char* text) {
  return std::strlen(text) == len && std::memcmp(name, text, len) == 0;
}

double AsDouble(const Value& v) {
  return v.kind == VKind::kFloat ? v.f : v.kind == VKind::kBool ? (v.b ? 1.0 : 0.0)
                                                                 : static_cast<double>(v.i);
}
int64_t AsInt(const Value& v) { return v.kind == VKind::kBool ? (v.b ? 1 : 0) : v.i; }
bool IsIntLike(const Value& v) { return v.kind == VKind::kInt || v.kind == VKind::kBool; }

}  // namespace

Status ChatRenderer::Fail(int32_t node, const char* format, ...) {
  char message[Status::kMaxMessage];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return Status::Error(StatusCode::kInvalidArgument, "chat template line %d: %s",
                       node >= 0 ? static_cast<int>(N(node).line) : 0, message);
}

Status ChatRenderer::TypeName(const Value& v, const char** name) const {
  *name = KindName(v);
  return Status::Ok();
}

// ----------------------------------------------------------------- scopes ---

Status ChatRenderer::PushFrame(int32_t node, bool barrier) {
  if (num_frames_ >= kMaxFrames) return Fail(node, "scopes nested too deeply");
  frames_[num_frames_].head = nullptr;
  frames_[num_frames_].barrier = barrier;
  ++num_frames_;
  return Status::Ok();
}

Status ChatRenderer::SetVar(const char* name, size_t len, const Value& value) {
  Frame& frame = frames_[num_frames_ - 1];
  for (Binding* b = frame.head; b != nullptr; b = b->next) {
    if (b->len == len && std::memcmp(b->name, name, len) == 0) {
      b->value = value;
      return Status::Ok();
    }
  }
  Binding* b = free_bindings_;
  if (b != nullptr) {
    free_bindings_ = b->next;
  } else {
    b = static_cast<Binding*>(arena_->Alloc(sizeof(Binding), alignof(Binding)));
    if (b == nullptr) return OutOfScratch();
  }
  b->name = name;
  b->len = len;
  b->value = value;
  b->next = frame.head;
  frame.head = b;
  return Status::Ok();
}

bool ChatRenderer::Lookup(const char* name, size_t len, Value* out) const {
  for (int f = num_frames_ - 1; f >= 0; --f) {
    for (const Binding* b = frames_[f].head; b != nullptr; b = b->next) {
      if (b->len == len && std::memcmp(b->name, name, len) == 0) {
        *out = b->value;
        return true;
      }
    }
    if (frames_[f].barrier && f > 0) f = 1;  // continue with the template's frame
  }
  for (size_t k = 0; k < input_.num_variables; ++k) {
    const ChatVariable& var = input_.variables[k];
    if (var.name.size() == len && std::memcmp(var.name.data(), name, len) == 0) {
      *out = Value::Str(var.value.data(), var.value.size());
      return true;
    }
  }
  if (NameIs(name, len, "messages")) {
    *out = messages_;
    return true;
  }
  if (NameIs(name, len, "add_generation_prompt")) {
    *out = Value::Bool(input_.add_generation_prompt);
    return true;
  }
  if (NameIs(name, len, "bos_token") && input_.bos_token.present) {
    *out = Value::Str(input_.bos_token.text.data(), input_.bos_token.text.size());
    return true;
  }
  if (NameIs(name, len, "eos_token") && input_.eos_token.present) {
    *out = Value::Str(input_.eos_token.text.data(), input_.eos_token.text.size());
    return true;
  }
  // transformers passes tools=None and documents=None when the caller has none.
  if (NameIs(name, len, "tools") || NameIs(name, len, "documents")) {
    *out = Value::None();
    return true;
  }
  static const struct {
    const char* name;
    BuiltinId id;
  } kBuiltins[] = {{"range", kBuiltinRange},
                   {"namespace", kBuiltinNamespace},
                   {"dict", kBuiltinDict},
                   {"raise_exception", kBuiltinRaise},
                   {"strftime_now", kBuiltinStrftime}};
  for (const auto& builtin : kBuiltins) {
    if (NameIs(name, len, builtin.name)) {
      if (builtin.id == kBuiltinStrftime && input_.now == nullptr) break;
      out->kind = VKind::kBuiltin;
      out->i = builtin.id;
      return true;
    }
  }
  *out = Value::Undefined(name, len);
  return false;
}

// ------------------------------------------------------------- statements ---

Status ChatRenderer::Render(int32_t root, BufferSink* out) {
  out_ = out;
  // messages: a list of {"role", "content"} dicts.
  OCTET_RETURN_IF_ERROR(NewList(input_.num_messages, false, &messages_));
  for (size_t k = 0; k < input_.num_messages; ++k) {
    auto* dict = static_cast<DictObj*>(arena_->Alloc(sizeof(DictObj), alignof(DictObj)));
    Value* keys = arena_->AllocArray<Value>(2);
    Value* values = arena_->AllocArray<Value>(2);
    if (dict == nullptr || keys == nullptr || values == nullptr) return OutOfScratch();
    keys[0] = Value::Str("role");
    keys[1] = Value::Str("content");
    values[0] = Value::Str(input_.messages[k].role.data(), input_.messages[k].role.size());
    values[1] = Value::Str(input_.messages[k].content.data(), input_.messages[k].content.size());
    dict->keys = keys;
    dict->values = values;
    dict->size = 2;
    Value& item = messages_.list->items[k];
    item = Value();
    item.kind = VKind::kDict;
    item.dict = dict;
  }
  OCTET_RETURN_IF_ERROR(PushFrame(-1, false));
  return Exec(root, out);
}

Status ChatRenderer::Exec(int32_t first, Sink* sink) {
  for (int32_t k = first; k >= 0 && flow_ == Flow::kNormal; k = N(k).next) {
    OCTET_RETURN_IF_ERROR(Step(k));
    const ChatTemplateNode& node = N(k);
    switch (node.kind) {
      case NodeKind::kText:
        OCTET_RETURN_IF_ERROR(Write(sink, Str(node), node.str_len));
        break;
      case NodeKind::kOutput: {
        Value v;
        OCTET_RETURN_IF_ERROR(Eval(node.a, &v));
        OCTET_RETURN_IF_ERROR(WriteStr(k, v, sink));
        break;
      }
      case NodeKind::kIf: {
        Value cond;
        OCTET_RETURN_IF_ERROR(Eval(node.a, &cond));
        if (Truthy(cond)) {
          OCTET_RETURN_IF_ERROR(Exec(node.b, sink));
        } else if (node.c >= 0) {
          // An elif is a single kIf statement; an else body is a list.
          OCTET_RETURN_IF_ERROR(Exec(node.c, sink));
        }
        break;
      }
      case NodeKind::kFor:
        OCTET_RETURN_IF_ERROR(ExecFor(k, sink));
        break;
      case NodeKind::kSet:
        OCTET_RETURN_IF_ERROR(ExecSet(k));
        break;
      case NodeKind::kSetBlock: {
        ChunkSink capture(arena_, &escape_mark_);
        OCTET_RETURN_IF_ERROR(Exec(node.b, &capture));
        Value v;
        if (!capture.Finish(&v)) return OutOfScratch();
        OCTET_RETURN_IF_ERROR(Assign(node.a, v));
        break;
      }
      case NodeKind::kMacro: {
        Value macro;
        macro.kind = VKind::kMacro;
        macro.node = k;
        OCTET_RETURN_IF_ERROR(SetVar(Str(node), node.str_len, macro));
        break;
      }
      case NodeKind::kBreak:
        flow_ = Flow::kBreak;
        break;
      case NodeKind::kContinue:
        flow_ = Flow::kContinue;
        break;
      case NodeKind::kScope:
        OCTET_RETURN_IF_ERROR(Exec(node.b, sink));
        break;
      default:
        return Fail(k, "internal: an expression node in a statement list");
    }
  }
  return Status::Ok();
}

Status ChatRenderer::ExecFor(int32_t k, Sink* sink) {
  const ChatTemplateNode& node = N(k);
  Value iterable;
  OCTET_RETURN_IF_ERROR(Eval(node.b, &iterable));
  const Value* items = nullptr;
  size_t n = 0;
  OCTET_RETURN_IF_ERROR(Items(k, iterable, &items, &n));
  if (n > limits_.max_loop_items) return Fail(k, "a loop over %zu items exceeds the limit", n);
  if (node.e >= 0) {
    // The loop's `if` filter runs first: loop.length counts what passes.
    Value* kept = arena_->AllocArray<Value>(n);
    if (kept == nullptr) return OutOfScratch();
    size_t num_kept = 0;
    for (size_t j = 0; j < n; ++j) {
      OCTET_RETURN_IF_ERROR(Step(k));
      OCTET_RETURN_IF_ERROR(PushFrame(k, false));
      Status s = Assign(node.a, items[j]);
      Value cond;
      if (s.ok()) s = Eval(node.e, &cond);
      PopFrame();
      OCTET_RETURN_IF_ERROR(s);
      if (Truthy(cond)) kept[num_kept++] = items[j];
    }
    items = kept;
    n = num_kept;
  }
  auto* loop = static_cast<LoopObj*>(arena_->Alloc(sizeof(LoopObj), alignof(LoopObj)));
  if (loop == nullptr) return OutOfScratch();
  loop->items = items;
  loop->length = n;
  Value loop_value;
  loop_value.kind = VKind::kLoop;
  loop_value.loop = loop;
  for (size_t j = 0; j < n; ++j) {
    OCTET_RETURN_IF_ERROR(Step(k));
    loop->index0 = j;
    const size_t mark = arena_->used();
    // A fresh scope per iteration: a `set` in the body lasts one iteration.
    OCTET_RETURN_IF_ERROR(PushFrame(k, false));
    Status s = Assign(node.a, items[j]);
    if (s.ok()) s = SetVar("loop", 4, loop_value);
    if (s.ok()) s = Exec(node.c, sink);
    PopFrame();
    OCTET_RETURN_IF_ERROR(s);
    if (escape_mark_ <= mark) ReleaseScratch(mark);
    if (flow_ == Flow::kBreak) {
      flow_ = Flow::kNormal;
      break;
    }
    flow_ = Flow::kNormal;
  }
  if (n == 0 && node.d >= 0) {
    OCTET_RETURN_IF_ERROR(PushFrame(k, false));
    const Status s = Exec(node.d, sink);
    PopFrame();
    OCTET_RETURN_IF_ERROR(s);
  }
  return Status::Ok();
}

Status ChatRenderer::Assign(int32_t target, const Value& value) {
  const ChatTemplateNode& t = N(target);
  if (t.kind == NodeKind::kName) return SetVar(Str(t), t.str_len, value);
  if (t.kind == NodeKind::kTuple) {
    size_t count = 0;
    for (int32_t k = t.a; k >= 0; k = N(k).next) ++count;
    if (value.kind != VKind::kList || value.list->size != count) {
      return Fail(target, "cannot unpack %s into %zu names", KindName(value), count);
    }
    size_t j = 0;
    for (int32_t k = t.a; k >= 0; k = N(k).next, ++j) {
      OCTET_RETURN_IF_ERROR(SetVar(Str(N(k)), N(k).str_len, value.list->items[j]));
    }
    return Status::Ok();
  }
  if (t.kind == NodeKind::kGetAttr) {
    Value ns;
    const ChatTemplateNode& base = N(t.a);
    Lookup(Str(base), base.str_len, &ns);
    if (ns.kind != VKind::kNamespace) {
      return Fail(target, "cannot assign attribute on non-namespace object");
    }
    for (NsEntry* e = ns.ns->head; e != nullptr; e = e->next) {
      if (e->len == t.str_len && std::memcmp(e->name, Str(t), t.str_len) == 0) {
        Value* stored = arena_->AllocArray<Value>(1);
        if (stored == nullptr) return OutOfScratch();
        *stored = value;
        e->value = stored;
        escape_mark_ = arena_->used();
        return Status::Ok();
      }
    }
    auto* e = static_cast<NsEntry*>(arena_->Alloc(sizeof(NsEntry), alignof(NsEntry)));
    Value* stored = arena_->AllocArray<Value>(1);
    if (e == nullptr || stored == nullptr) return OutOfScratch();
    *stored = value;
    e->name = Str(t);
    e->len = t.str_len;
    e->value = stored;
    e->next = ns.ns->head;
    ns.ns->head = e;
    escape_mark_ = arena_->used();
    return Status::Ok();
  }
  return Fail(target, "cannot assign to this target");
}

Status ChatRenderer::ExecSet(int32_t k) {
  Value v;
  OCTET_RETURN_IF_ERROR(Eval(N(k).b, &v));
  return Assign(N(k).a, v);
}

// ------------------------------------------------------------ allocation ---

Status ChatRenderer::NewString(size_t n, char** out) {
  *out = arena_->AllocArray<char>(n);
  if (*out == nullptr) return OutOfScratch();
  return Status::Ok();
}

Status ChatRenderer::NewList(size_t n, bool tuple, Value* out) {
  auto* list = static_cast<ListObj*>(arena_->Alloc(sizeof(ListObj), alignof(ListObj)));
  Value* items = arena_->AllocArray<Value>(n);
  if (list == nullptr || items == nullptr) return OutOfScratch();
  for (size_t k = 0; k < n; ++k) items[k] = Value();
  list->items = items;
  list->size = n;
  list->tuple = tuple;
  list->view = 0;
  *out = Value();
  out->kind = VKind::kList;
  out->list = list;
  return Status::Ok();
}

// The items a for loop (or list(), join, ...) sees: a list's items, a dict's
// keys, a string's characters; Undefined iterates as empty.
Status ChatRenderer::Items(int32_t node, const Value& v, const Value** items, size_t* n) {
  switch (v.kind) {
    case VKind::kUndefined:
      *items = nullptr;
      *n = 0;
      return Status::Ok();
    case VKind::kList:
      *items = v.list->items;
      *n = v.list->size;
      return Status::Ok();
    case VKind::kDict:
      *items = v.dict->keys;
      *n = v.dict->size;
      return Status::Ok();
    case VKind::kString: {
      const size_t count = CodePointCount(v.s, v.n);
      Value* chars = arena_->AllocArray<Value>(count);
      if (chars == nullptr) return OutOfScratch();
      size_t at = 0;
      for (size_t j = 0; j < count; ++j) {
        const size_t start = at;
        DecodeLenient(v.s, v.n, &at);
        chars[j] = Value::Str(v.s + start, at - start);
      }
      *items = chars;
      *n = count;
      return Status::Ok();
    }
    default:
      return Fail(node, "'%s' object is not iterable", KindName(v));
  }
}

// ------------------------------------------------------------- truth, eq ---

bool ChatRenderer::Truthy(const Value& v) {
  switch (v.kind) {
    case VKind::kUndefined:
    case VKind::kNone: return false;
    case VKind::kBool: return v.b;
    case VKind::kInt: return v.i != 0;
    case VKind::kFloat: return v.f != 0.0;
    case VKind::kString: return v.n != 0;
    case VKind::kList: return v.list->size != 0;
    case VKind::kDict: return v.dict->size != 0;
    default: return true;
  }
}

bool ChatRenderer::Equals(const Value& a, const Value& b, int depth) const {
  if (depth > kMaxValueDepth) return false;
  if (a.is_number() && b.is_number()) {
    if (a.kind == VKind::kFloat || b.kind == VKind::kFloat) return AsDouble(a) == AsDouble(b);
    return AsInt(a) == AsInt(b);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case VKind::kUndefined:
    case VKind::kNone: return true;
    case VKind::kString: return a.n == b.n && std::memcmp(a.s, b.s, a.n) == 0;
    case VKind::kList:
      if (a.list->tuple != b.list->tuple || a.list->size != b.list->size) return false;
      for (size_t k = 0; k < a.list->size; ++k) {
        if (!Equals(a.list->items[k], b.list->items[k], depth + 1)) return false;
      }
      return true;
    case VKind::kDict: {
      if (a.dict->size != b.dict->size) return false;
      for (size_t k = 0; k < a.dict->size; ++k) {
        bool found = false;
        for (size_t j = 0; j < b.dict->size && !found; ++j) {
          if (Equals(a.dict->keys[k], b.dict->keys[j], depth + 1)) {
            if (!Equals(a.dict->values[k], b.dict->values[j], depth + 1)) return false;
            found = true;
          }
        }
        if (!found) return false;
      }
      return true;
    }
    case VKind::kNamespace: return a.ns == b.ns;
    case VKind::kLoop: return a.loop == b.loop;
    case VKind::kMacro: return a.node == b.node;
    case VKind::kBuiltin: return a.i == b.i;
    default: return false;
  }
}

Status ChatRenderer::Less(int32_t node, const Value& a, const Value& b, bool* out) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == VKind::kFloat || b.kind == VKind::kFloat) {
      *out = AsDouble(a) < AsDouble(b);
    } else {
      *out = AsInt(a) < AsInt(b);
    }
    return Status::Ok();
  }
  if (a.is_string() && b.is_string()) {
    // UTF-8 byte order is code point order.
    const int c = std::memcmp(a.s, b.s, a.n < b.n ? a.n : b.n);
    *out = c < 0 || (c == 0 && a.n < b.n);
    return Status::Ok();
  }
  if (a.kind == VKind::kList && b.kind == VKind::kList) {
    const size_t n = a.list->size < b.list->size ? a.list->size : b.list->size;
    for (size_t k = 0; k < n; ++k) {
      if (!Equals(a.list->items[k], b.list->items[k])) {
        return Less(node, a.list->items[k], b.list->items[k], out);
      }
    }
    *out = a.list->size < b.list->size;
    return Status::Ok();
  }
  if (a.is_undefined() || b.is_undefined()) {
    const Value& u = a.is_undefined() ? a : b;
    return Fail(node, "'%.*s' is undefined", static_cast<int>(u.n), u.s);
  }
  return Fail(node, "'<' not supported between instances of '%s' and '%s'", KindName(a),
              KindName(b));
}

Status ChatRenderer::Contains(int32_t node, const Value& container, const Value& item,
                              bool* out) {
  *out = false;
  switch (container.kind) {
    case VKind::kString: {
      if (!item.is_string()) {
        return Fail(node, "'in <string>' requires string as left operand, not %s",
                    KindName(item));
      }
      if (item.n == 0) {
        *out = true;
        return Status::Ok();
      }
      for (size_t k = 0; k + item.n <= container.n; ++k) {
        if (std::memcmp(container.s + k, item.s, item.n) == 0) {
          *out = true;
          break;
        }
      }
      return Status::Ok();
    }
    case VKind::kList:
      for (size_t k = 0; k < container.list->size && !*out; ++k) {
        *out = Equals(container.list->items[k], item);
      }
      return Status::Ok();
    case VKind::kDict:
      for (size_t k = 0; k < container.dict->size && !*out; ++k) {
        *out = Equals(container.dict->keys[k], item);
      }
      return Status::Ok();
    case VKind::kUndefined:
      return Status::Ok();
    default:
      return Fail(node, "argument of type '%s' is not iterable", KindName(container));
  }
}

// ------------------------------------------------------------ expressions ---

Status ChatRenderer::Eval(int32_t k, Value* out) {
  const ChatTemplateNode& node = N(k);
  switch (node.kind) {
    case NodeKind::kConst:
      switch (node.op) {
        case kConstNone: *out = Value::None(); break;
        case kConstBool: *out = Value::Bool(node.i != 0); break;
        case kConstInt: *out = Value::Int(node.i); break;
        case kConstFloat: *out = Value::Float(node.f); break;
        default: *out = Value::Str(Str(node), node.str_len); break;
      }
      return Status::Ok();
    case NodeKind::kName:
      Lookup(Str(node), node.str_len, out);
      return Status::Ok();
    case NodeKind::kList:
    case NodeKind::kTuple: {
      size_t count = 0;
      for (int32_t j = node.a; j >= 0; j = N(j).next) ++count;
      OCTET_RETURN_IF_ERROR(NewList(count, node.kind == NodeKind::kTuple, out));
      size_t at = 0;
      for (int32_t j = node.a; j >= 0; j = N(j).next) {
        OCTET_RETURN_IF_ERROR(Eval(j, &out->list->items[at++]));
      }
      return Status::Ok();
    }
    case NodeKind::kDict: {
      size_t count = 0;
      for (int32_t j = node.a; j >= 0; j = N(j).next) ++count;
      auto* dict = static_cast<DictObj*>(arena_->Alloc(sizeof(DictObj), alignof(DictObj)));
      Value* keys = arena_->AllocArray<Value>(count);
      Value* values = arena_->AllocArray<Value>(count);
      if (dict == nullptr || keys == nullptr || values == nullptr) return OutOfScratch();
      size_t size = 0;
      for (int32_t j = node.a; j >= 0; j = N(j).next) {
        Value key, value;
        OCTET_RETURN_IF_ERROR(Eval(N(j).a, &key));
        OCTET_RETURN_IF_ERROR(Eval(N(j).b, &value));
        if (key.kind == VKind::kList && !key.list->tuple) return Fail(j, "unhashable type: 'list'");
        if (key.kind == VKind::kDict) return Fail(j, "unhashable type: 'dict'");
        size_t slot = size;
        for (size_t q = 0; q < size; ++q) {
          if (Equals(keys[q], key)) slot = q;
        }
        keys[slot] = key;
        values[slot] = value;
        if (slot == size) ++size;
      }
      dict->keys = keys;
      dict->values = values;
      dict->size = size;
      *out = Value();
      out->kind = VKind::kDict;
      out->dict = dict;
      return Status::Ok();
    }
    case NodeKind::kGetAttr: {
      Value obj;
      OCTET_RETURN_IF_ERROR(Eval(node.a, &obj));
      return GetAttr(k, obj, Str(node), node.str_len, out);
    }
    case NodeKind::kGetItem: {
      Value obj, key;
      OCTET_RETURN_IF_ERROR(Eval(node.a, &obj));
      OCTET_RETURN_IF_ERROR(Eval(node.b, &key));
      return GetItem(k, obj, key, out);
    }
    case NodeKind::kSlice: {
      Value obj, parts[3];
      OCTET_RETURN_IF_ERROR(Eval(node.a, &obj));
      const int32_t idx[3] = {node.b, node.c, node.d};
      for (int j = 0; j < 3; ++j) {
        if (idx[j] >= 0) OCTET_RETURN_IF_ERROR(Eval(idx[j], &parts[j]));
      }
      return Slice(k, obj, idx[0] >= 0 ? &parts[0] : nullptr, idx[1] >= 0 ? &parts[1] : nullptr,
                   idx[2] >= 0 ? &parts[2] : nullptr, out);
    }
    case NodeKind::kCall:
      return EvalCall(k, out);
    case NodeKind::kFilter:
    case NodeKind::kTest:
      return EvalFilterOrTest(k, out);
    case NodeKind::kUnary: {
      Value v;
      OCTET_RETURN_IF_ERROR(Eval(node.a, &v));
      if (node.op == 'n') {
        *out = Value::Bool(!Truthy(v));
        return Status::Ok();
      }
      if (v.kind == VKind::kFloat) {
        *out = Value::Float(node.op == '-' ? -v.f : v.f);
        return Status::Ok();
      }
      if (IsIntLike(v)) {
        const int64_t i = AsInt(v);
        if (node.op == '-' && i == INT64_MIN) return Fail(k, "integer overflow");
        *out = Value::Int(node.op == '-' ? -i : i);
        return Status::Ok();
      }
      if (v.is_undefined()) return Fail(k, "'%.*s' is undefined", static_cast<int>(v.n), v.s);
      return Fail(k, "bad operand type for unary %c: '%s'", static_cast<char>(node.op),
                  KindName(v));
    }
    case NodeKind::kBinary: {
      Value a, b;
      OCTET_RETURN_IF_ERROR(Eval(node.a, &a));
      OCTET_RETURN_IF_ERROR(Eval(node.b, &b));
      return Binary(k, node.op, a, b, out);
    }
    case NodeKind::kCompare:
      return EvalCompare(k, out);
    case NodeKind::kAnd:
    case NodeKind::kOr: {
      // Python's and/or return an operand, not a bool.
      OCTET_RETURN_IF_ERROR(Eval(node.a, out));
      if (Truthy(*out) == (node.kind == NodeKind::kOr)) return Status::Ok();
      return Eval(node.b, out);
    }
    case NodeKind::kCond: {
      Value cond;
      OCTET_RETURN_IF_ERROR(Eval(node.b, &cond));
      if (Truthy(cond)) return Eval(node.a, out);
      if (node.c >= 0) return Eval(node.c, out);
      *out = Value::Undefined();
      return Status::Ok();
    }
    default:
      return Fail(k, "internal: a statement node in an expression");
  }
}

// Out of line so that Eval's frame stays small: expressions nest, and each
// level of nesting is an Eval frame on the stack.
__attribute__((noinline)) Status ChatRenderer::EvalFilterOrTest(int32_t k, Value* out) {
  const ChatTemplateNode& node = N(k);
  Value value;
  OCTET_RETURN_IF_ERROR(Eval(node.a, &value));
  Args args;
  OCTET_RETURN_IF_ERROR(EvalArgs(node.b, &args));
  if (node.kind == NodeKind::kFilter) return ApplyFilter(k, node.op, value, args, out);
  bool result = false;
  OCTET_RETURN_IF_ERROR(ApplyTest(k, node.op, value, args, &result));
  *out = Value::Bool(node.i != 0 ? !result : result);
  return Status::Ok();
}

Status ChatRenderer::EvalCompare(int32_t k, Value* out) {
  Value left;
  OCTET_RETURN_IF_ERROR(Eval(N(k).a, &left));
  for (int32_t j = N(k).b; j >= 0; j = N(j).next) {
    Value right;
    OCTET_RETURN_IF_ERROR(Eval(N(j).a, &right));
    bool result = false;
    switch (N(j).op) {
      case kCmpEq: result = Equals(left, right); break;
      case kCmpNe: result = !Equals(left, right); break;
      case kCmpLt: OCTET_RETURN_IF_ERROR(Less(j, left, right, &result)); break;
      case kCmpGt: OCTET_RETURN_IF_ERROR(Less(j, right, left, &result)); break;
      case kCmpLe:
        OCTET_RETURN_IF_ERROR(Less(j, right, left, &result));
        result = !result;
        break;
      case kCmpGe:
        OCTET_RETURN_IF_ERROR(Less(j, left, right, &result));
        result = !result;
        break;
      case kCmpIn: OCTET_RETURN_IF_ERROR(Contains(j, right, left, &result)); break;
      default:
        OCTET_RETURN_IF_ERROR(Contains(j, right, left, &result));
        result = !result;
        break;
    }
    if (!result) {
      *out = Value::Bool(false);
      return Status::Ok();
    }
    left = right;
  }
  *out = Value::Bool(true);
  return Status::Ok();
}

Status ChatRenderer::Binary(int32_t k, uint16_t op, const Value& a, const Value& b, Value* out) {
  if (op == kOpConcat) {
    Value sa, sb;
    OCTET_RETURN_IF_ERROR(ToStr(k, a, &sa));
    OCTET_RETURN_IF_ERROR(ToStr(k, b, &sb));
    char* joined = nullptr;
    OCTET_RETURN_IF_ERROR(NewString(sa.n + sb.n, &joined));
    std::memcpy(joined, sa.s, sa.n);
    std::memcpy(joined + sa.n, sb.s, sb.n);
    *out = Value::Str(joined, sa.n + sb.n);
    return Status::Ok();
  }
  if (a.is_undefined() || b.is_undefined()) {
    const Value& u = a.is_undefined() ? a : b;
    return Fail(k, "'%.*s' is undefined", static_cast<int>(u.n), u.s);
  }
  if (a.is_number() && b.is_number()) {
    const bool ints = IsIntLike(a) && IsIntLike(b);
    const int64_t x = AsInt(a), y = AsInt(b);
    const double fx = AsDouble(a), fy = AsDouble(b);
    int64_t r = 0;
    switch (op) {
      case kOpAdd:
        if (!ints) break;
        if (__builtin_add_overflow(x, y, &r)) return Fail(k, "integer overflow");
        *out = Value::Int(r);
        return Status::Ok();
      case kOpSub:
        if (!ints) break;
        if (__builtin_sub_overflow(x, y, &r)) return Fail(k, "integer overflow");
        *out = Value::Int(r);
        return Status::Ok();
      case kOpMul:
        if (!ints) break;
        if (__builtin_mul_overflow(x, y, &r)) return Fail(k, "integer overflow");
        *out = Value::Int(r);
        return Status::Ok();
      case kOpDiv:
        if (fy == 0.0) return Fail(k, "division by zero");
        *out = Value::Float(fx / fy);
        return Status::Ok();
      case kOpFloorDiv:
      case kOpMod:
        if (ints) {
          if (y == 0) return Fail(k, "integer division or modulo by zero");
          if (x == INT64_MIN && y == -1) return Fail(k, "integer overflow");
          int64_t q = x / y, m = x % y;
          if (m != 0 && ((m < 0) != (y < 0))) {
            q -= 1;
            m += y;
          }
          *out = Value::Int(op == kOpFloorDiv ? q : m);
          return Status::Ok();
        }
        if (fy == 0.0) return Fail(k, "float division by zero");
        if (op == kOpFloorDiv) {
          *out = Value::Float(std::floor(fx / fy));
        } else {
          double m = std::fmod(fx, fy);
          if (m != 0.0 && ((m < 0) != (fy < 0))) m += fy;
          *out = Value::Float(m);
        }
        return Status::Ok();
      case kOpPow:
        if (ints && y >= 0) {
          int64_t acc = 1;
          for (int64_t e = 0; e < y; ++e) {
            if (__builtin_mul_overflow(acc, x, &acc)) return Fail(k, "integer overflow");
            if (acc == 0 || acc == 1) break;
          }
          if (acc == 1 && x == -1) acc = (y % 2 == 0) ? 1 : -1;
          *out = Value::Int(acc);
          return Status::Ok();
        }
        *out = Value::Float(std::pow(fx, fy));
        return Status::Ok();
      default:
        break;
    }
    switch (op) {
      case kOpAdd: *out = Value::Float(fx + fy); return Status::Ok();
      case kOpSub: *out = Value::Float(fx - fy); return Status::Ok();
      case kOpMul: *out = Value::Float(fx * fy); return Status::Ok();
      default: break;
    }
  }
  if (op == kOpAdd && a.is_string() && b.is_string()) {
    char* joined = nullptr;
    OCTET_RETURN_IF_ERROR(NewString(a.n + b.n, &joined));
    std::memcpy(joined, a.s, a.n);
    std::memcpy(joined + a.n, b.s, b.n);
    *out = Value::Str(joined, a.n + b.n);
    return Status::Ok();
  }
  if (op == kOpAdd && a.kind == VKind::kList && b.kind == VKind::kList &&
      a.list->tuple == b.list->tuple) {
    OCTET_RETURN_IF_ERROR(NewList(a.list->size + b.list->size, a.list->tuple, out));
    for (size_t j = 0; j < a.list->size; ++j) out->list->items[j] = a.list->items[j];
    for (size_t j = 0; j < b.list->size; ++j) out->list->items[a.list->size + j] = b.list->items[j];
    return Status::Ok();
  }
  if (op == kOpMul && (a.is_string() || a.kind == VKind::kList || b.is_string() ||
                       b.kind == VKind::kList)) {
    const Value& seq = (a.is_string() || a.kind == VKind::kList) ? a : b;
    const Value& times = (&seq == &a) ? b : a;
    if (!IsIntLike(times)) return Fail(k, "can't multiply sequence by non-int");
    const int64_t t = AsInt(times) < 0 ? 0 : AsInt(times);
    const size_t unit = seq.is_string() ? seq.n : seq.list->size;
    if (unit != 0 && static_cast<uint64_t>(t) > arena_->free_bytes() / unit) return OutOfScratch();
    const size_t total = unit * static_cast<size_t>(t);
    if (seq.is_string()) {
      char* s = nullptr;
      OCTET_RETURN_IF_ERROR(NewString(total, &s));
      for (int64_t j = 0; j < t; ++j) std::memcpy(s + j * unit, seq.s, unit);
      *out = Value::Str(s, total);
    } else {
      OCTET_RETURN_IF_ERROR(NewList(total, seq.list->tuple, out));
      for (size_t j = 0; j < total; ++j) out->list->items[j] = seq.list->items[j % unit];
    }
    return Status::Ok();
  }
  if (op == kOpMod && a.is_string()) return Fail(k, "'%%' string formatting is not supported");
  static const char* const kOpNames[] = {"+", "-", "*", "/", "//", "%", "**", "~"};
  return Fail(k, "unsupported operand type(s) for %s: '%s' and '%s'", kOpNames[op],
              KindName(a), KindName(b));
}

Status ChatRenderer::GetAttr(int32_t k, const Value& obj, const char* name, size_t len,
                             Value* out) {
  switch (obj.kind) {
    case VKind::kUndefined:
      if (obj.n == 0) return Fail(k, "'%.*s' is undefined", static_cast<int>(len), name);
      return Fail(k, "'%.*s' is undefined", static_cast<int>(obj.n), obj.s);
    case VKind::kDict: {
      static const char* const kDictMethods[] = {"items", "keys", "values", "get", "pop",
                                                 "update", "copy", "clear", "setdefault",
                                                 "popitem", "fromkeys"};
      for (const char* m : kDictMethods) {
        if (NameIs(name, len, m)) {
          *out = Value();
          out->kind = VKind::kMethod;
          return Status::Ok();
        }
      }
      return GetItem(k, obj, Value::Str(name, len), out);
    }
    case VKind::kNamespace:
      for (const NsEntry* e = obj.ns->head; e != nullptr; e = e->next) {
        if (e->len == len && std::memcmp(e->name, name, len) == 0) {
          *out = *e->value;
          return Status::Ok();
        }
      }
      *out = Value::Undefined(name, len);
      return Status::Ok();
    case VKind::kLoop: {
      const LoopObj& loop = *obj.loop;
      if (NameIs(name, len, "index")) {
        *out = Value::Int(static_cast<int64_t>(loop.index0 + 1));
      } else if (NameIs(name, len, "index0")) {
        *out = Value::Int(static_cast<int64_t>(loop.index0));
      } else if (NameIs(name, len, "revindex")) {
        *out = Value::Int(static_cast<int64_t>(loop.length - loop.index0));
      } else if (NameIs(name, len, "revindex0")) {
        *out = Value::Int(static_cast<int64_t>(loop.length - loop.index0 - 1));
      } else if (NameIs(name, len, "first")) {
        *out = Value::Bool(loop.index0 == 0);
      } else if (NameIs(name, len, "last")) {
        *out = Value::Bool(loop.index0 + 1 == loop.length);
      } else if (NameIs(name, len, "length")) {
        *out = Value::Int(static_cast<int64_t>(loop.length));
      } else if (NameIs(name, len, "depth")) {
        *out = Value::Int(1);
      } else if (NameIs(name, len, "depth0")) {
        *out = Value::Int(0);
      } else if (NameIs(name, len, "previtem")) {
        *out = loop.index0 > 0 ? loop.items[loop.index0 - 1] : Value::Undefined(name, len);
      } else if (NameIs(name, len, "nextitem")) {
        *out = loop.index0 + 1 < loop.length ? loop.items[loop.index0 + 1]
                                             : Value::Undefined(name, len);
      } else {
        *out = Value::Undefined(name, len);
      }
      return Status::Ok();
    }
    case VKind::kString:
      for (size_t m = 0; m < kNumMethodNames; ++m) {
        if (NameIs(name, len, kMethodNames[m])) {
          *out = Value();
          out->kind = VKind::kMethod;
          return Status::Ok();
        }
      }
      *out = Value::Undefined(name, len);
      return Status::Ok();
    default:
      *out = Value::Undefined(name, len);
      return Status::Ok();
  }
}

Status ChatRenderer::GetItem(int32_t k, const Value& obj, const Value& key, Value* out) {
  switch (obj.kind) {
    case VKind::kUndefined:
      if (obj.n == 0) return Fail(k, "an undefined value has no items");
      return Fail(k, "'%.*s' is undefined", static_cast<int>(obj.n), obj.s);
    case VKind::kDict:
      for (size_t j = 0; j < obj.dict->size; ++j) {
        if (Equals(obj.dict->keys[j], key)) {
          *out = obj.dict->values[j];
          return Status::Ok();
        }
      }
      break;
    case VKind::kList:
    case VKind::kString:
      if (IsIntLike(key)) {
        const bool str = obj.is_string();
        const size_t size = str ? (IsAscii(obj.s, obj.n) ? obj.n : CodePointCount(obj.s, obj.n))
                                : obj.list->size;
        int64_t index = AsInt(key);
        if (index < 0) index += static_cast<int64_t>(size);
        if (index >= 0 && static_cast<size_t>(index) < size) {
          if (!str) {
            *out = obj.list->items[index];
          } else {
            const size_t at = CodePointOffset(obj.s, obj.n, static_cast<size_t>(index));
            size_t end = at;
            DecodeLenient(obj.s, obj.n, &end);
            *out = Value::Str(obj.s + at, end - at);
          }
          return Status::Ok();
        }
      }
      break;
    case VKind::kNamespace:
    case VKind::kLoop:
      if (key.is_string()) return GetAttr(k, obj, key.s, key.n, out);
      break;
    default:
      break;
  }
  // jinja2: a failed lookup falls back to the attribute, then to Undefined.
  if (key.is_string() && obj.kind != VKind::kDict) return GetAttr(k, obj, key.s, key.n, out);
  if (key.is_string()) {
    *out = Value::Undefined(key.s, key.n);
  } else {
    *out = Value::Undefined();
  }
  return Status::Ok();
}

Status ChatRenderer::Slice(int32_t k, const Value& obj, const Value* start, const Value* stop,
                           const Value* step, Value* out) {
  if (obj.is_undefined()) return Fail(k, "'%.*s' is undefined", static_cast<int>(obj.n), obj.s);
  if (obj.kind != VKind::kList && !obj.is_string()) {
    *out = Value::Undefined();
    return Status::Ok();
  }
  for (const Value* part : {start, stop, step}) {
    if (part != nullptr && part->kind != VKind::kNone && !IsIntLike(*part)) {
      return Fail(k, "slice indices must be integers or None");
    }
  }
  const bool str = obj.is_string();
  const bool ascii = str && IsAscii(obj.s, obj.n);
  const int64_t size = static_cast<int64_t>(
      str ? (ascii ? obj.n : CodePointCount(obj.s, obj.n)) : obj.list->size);
  const int64_t st = (step == nullptr || step->kind == VKind::kNone) ? 1 : AsInt(*step);
  if (st == 0) return Fail(k, "slice step cannot be zero");
  auto clamp = [&](const Value* v, int64_t def) {
    if (v == nullptr || v->kind == VKind::kNone) return def;
    int64_t i = AsInt(*v);
    if (i < 0) {
      i += size;
      if (i < 0) i = st < 0 ? -1 : 0;
    } else if (i >= size) {
      i = st < 0 ? size - 1 : size;
    }
    return i;
  };
  const int64_t lo = clamp(start, st < 0 ? size - 1 : 0);
  const int64_t hi = clamp(stop, st < 0 ? -1 : size);
  int64_t count = 0;
  if (st > 0 && hi > lo) count = (hi - lo + st - 1) / st;
  if (st < 0 && lo > hi) count = (lo - hi + (-st) - 1) / (-st);
  if (!str) {
    OCTET_RETURN_IF_ERROR(NewList(static_cast<size_t>(count), obj.list->tuple, out));
    for (int64_t j = 0; j < count; ++j) out->list->items[j] = obj.list->items[lo + j * st];
    return Status::Ok();
  }
  if (ascii && st == 1) {
    *out = Value::Str(obj.s + lo, static_cast<size_t>(count));
    return Status::Ok();
  }
  // Code point offsets, then the picked characters.
  size_t* offsets = arena_->AllocArray<size_t>(static_cast<size_t>(size) + 1);
  if (offsets == nullptr) return OutOfScratch();
  size_t at = 0;
  for (int64_t j = 0; j < size; ++j) {
    offsets[j] = at;
    DecodeLenient(obj.s, obj.n, &at);
  }
  offsets[size] = obj.n;
  size_t bytes = 0;
  for (int64_t j = 0; j < count; ++j) {
    const int64_t c = lo + j * st;
    bytes += offsets[c + 1] - offsets[c];
  }
  char* s = nullptr;
  OCTET_RETURN_IF_ERROR(NewString(bytes, &s));
  size_t w = 0;
  for (int64_t j = 0; j < count; ++j) {
    const int64_t c = lo + j * st;
    const size_t len = offsets[c + 1] - offsets[c];
    std::memcpy(s + w, obj.s + offsets[c], len);
    w += len;
  }
  *out = Value::Str(s, bytes);
  return Status::Ok();
}

Status ChatRenderer::EvalArgs(int32_t first_arg, Args* args) {
  for (int32_t j = first_arg; j >= 0; j = N(j).next) {
    const ChatTemplateNode& arg = N(j);
    if (arg.str_len == 0) {
      if (args->num_pos >= kMaxArgs) return Fail(j, "more than 8 positional arguments");
      OCTET_RETURN_IF_ERROR(Eval(arg.a, &args->pos[args->num_pos++]));
    } else {
      if (args->num_kw >= kMaxArgs) return Fail(j, "more than 8 keyword arguments");
      args->kw_name[args->num_kw] = Str(arg);
      args->kw_len[args->num_kw] = arg.str_len;
      OCTET_RETURN_IF_ERROR(Eval(arg.a, &args->kw[args->num_kw++]));
    }
  }
  return Status::Ok();
}

__attribute__((noinline)) Status ChatRenderer::EvalCall(int32_t k, Value* out) {
  const ChatTemplateNode& node = N(k);
  OCTET_RETURN_IF_ERROR(Step(k));
  Args args;
  const ChatTemplateNode& callee = N(node.a);
  Value fn;
  if (callee.kind == NodeKind::kGetAttr) {
    Value obj;
    OCTET_RETURN_IF_ERROR(Eval(callee.a, &obj));
    OCTET_RETURN_IF_ERROR(EvalArgs(node.b, &args));
    bool handled = false;
    OCTET_RETURN_IF_ERROR(CallMethod(k, obj, Str(callee), callee.str_len, args, &handled, out));
    if (handled) return Status::Ok();
    OCTET_RETURN_IF_ERROR(GetAttr(node.a, obj, Str(callee), callee.str_len, &fn));
  } else {
    OCTET_RETURN_IF_ERROR(Eval(node.a, &fn));
    OCTET_RETURN_IF_ERROR(EvalArgs(node.b, &args));
  }
  if (fn.kind == VKind::kMacro) return CallMacro(k, fn, args, out);
  if (fn.kind == VKind::kBuiltin) return CallBuiltin(k, fn.i, args, out);
  if (fn.is_undefined()) {
    return Fail(k, "'%.*s' is undefined", static_cast<int>(fn.n), fn.s);
  }
  return Fail(k, "'%s' object is not callable", KindName(fn));
}

Status ChatRenderer::CallMacro(int32_t k, const Value& macro, const Args& args, Value* out) {
  if (call_depth_ >= limits_.max_call_depth) return Fail(k, "macro calls nested too deeply");
  const ChatTemplateNode& def = N(macro.node);
  size_t num_params = 0;
  for (int32_t p = def.a; p >= 0; p = N(p).next) ++num_params;
  if (args.num_pos > num_params) {
    return Fail(k, "macro '%.*s' takes not more than %zu argument(s)", static_cast<int>(def.str_len),
                Str(def), num_params);
  }
  for (size_t j = 0; j < args.num_kw; ++j) {
    bool known = false;
    for (int32_t p = def.a; p >= 0 && !known; p = N(p).next) {
      known = N(p).str_len == args.kw_len[j] &&
              std::memcmp(Str(N(p)), args.kw_name[j], args.kw_len[j]) == 0;
    }
    if (!known) {
      return Fail(k, "macro '%.*s' has no argument '%.*s'", static_cast<int>(def.str_len), Str(def),
                  static_cast<int>(args.kw_len[j]), args.kw_name[j]);
    }
  }
  OCTET_RETURN_IF_ERROR(PushFrame(k, true));
  ++call_depth_;
  Status s = Status::Ok();
  size_t index = 0;
  for (int32_t p = def.a; p >= 0 && s.ok(); p = N(p).next, ++index) {
    const ChatTemplateNode& param = N(p);
    const Value* given = args.Get(index, "");
    if (index >= args.num_pos) {
      given = nullptr;
      for (size_t j = 0; j < args.num_kw; ++j) {
        if (args.kw_len[j] == param.str_len &&
            std::memcmp(args.kw_name[j], Str(param), param.str_len) == 0) {
          given = &args.kw[j];
        }
      }
    }
    Value v = Value::Undefined(Str(param), param.str_len);
    if (given != nullptr) {
      v = *given;
    } else if (param.a >= 0) {
      s = Eval(param.a, &v);
    }
    if (s.ok()) s = SetVar(Str(param), param.str_len, v);
  }
  ChunkSink capture(arena_, &escape_mark_);
  if (s.ok()) s = Exec(def.b, &capture);
  flow_ = Flow::kNormal;
  --call_depth_;
  PopFrame();
  OCTET_RETURN_IF_ERROR(s);
  if (!capture.Finish(out)) return OutOfScratch();
  return Status::Ok();
}

Status ChatRenderer::CallBuiltin(int32_t k, int64_t id, const Args& args, Value* out) {
  switch (id) {
    case kBuiltinRange: {
      if (args.num_kw > 0 || args.num_pos == 0 || args.num_pos > 3) {
        return Fail(k, "range() takes 1 to 3 positional arguments");
      }
      for (size_t j = 0; j < args.num_pos; ++j) {
        if (!IsIntLike(args.pos[j])) return Fail(k, "range() arguments must be integers");
      }
      int64_t start = 0, stop = 0, step = 1;
      if (args.num_pos == 1) {
        stop = AsInt(args.pos[0]);
      } else {
        start = AsInt(args.pos[0]);
        stop = AsInt(args.pos[1]);
        if (args.num_pos == 3) step = AsInt(args.pos[2]);
      }
      if (step == 0) return Fail(k, "range() arg 3 must not be zero");
      // Counted in double: start/stop may be anywhere in int64.
      const double span = (static_cast<double>(stop) - static_cast<double>(start)) /
                          static_cast<double>(step);
      const double count = span <= 0 ? 0 : std::ceil(span);
      if (count > static_cast<double>(kMaxRange)) {
        return Fail(k, "range too big: the sandbox blocks ranges larger than %" PRId64,
                    kMaxRange);
      }
      const size_t n = static_cast<size_t>(count);
      OCTET_RETURN_IF_ERROR(NewList(n, false, out));
      for (size_t j = 0; j < n; ++j) {
        out->list->items[j] = Value::Int(start + static_cast<int64_t>(j) * step);
      }
      return Status::Ok();
    }
    case kBuiltinNamespace:
    case kBuiltinDict: {
      if (args.num_pos > 0) return Fail(k, "namespace() and dict() take keyword arguments only");
      if (id == kBuiltinDict) {
        auto* dict = static_cast<DictObj*>(arena_->Alloc(sizeof(DictObj), alignof(DictObj)));
        Value* keys = arena_->AllocArray<Value>(args.num_kw);
        Value* values = arena_->AllocArray<Value>(args.num_kw);
        if (dict == nullptr || keys == nullptr || values == nullptr) return OutOfScratch();
        for (size_t j = 0; j < args.num_kw; ++j) {
          keys[j] = Value::Str(args.kw_name[j], args.kw_len[j]);
          values[j] = args.kw[j];
        }
        dict->keys = keys;
        dict->values = values;
        dict->size = args.num_kw;
        *out = Value();
        out->kind = VKind::kDict;
        out->dict = dict;
        return Status::Ok();
      }
      auto* ns = static_cast<NsObj*>(arena_->Alloc(sizeof(NsObj), alignof(NsObj)));
      if (ns == nullptr) return OutOfScratch();
      ns->head = nullptr;
      for (size_t j = args.num_kw; j > 0; --j) {
        auto* e = static_cast<NsEntry*>(arena_->Alloc(sizeof(NsEntry), alignof(NsEntry)));
        Value* stored = arena_->AllocArray<Value>(1);
        if (e == nullptr || stored == nullptr) return OutOfScratch();
        *stored = args.kw[j - 1];
        e->name = args.kw_name[j - 1];
        e->len = args.kw_len[j - 1];
        e->value = stored;
        e->next = ns->head;
        ns->head = e;
      }
      *out = Value();
      out->kind = VKind::kNamespace;
      out->ns = ns;
      return Status::Ok();
    }
    case kBuiltinRaise: {
      Value message = args.num_pos > 0 ? args.pos[0] : Value::Str("");
      Value text;
      OCTET_RETURN_IF_ERROR(ToStr(k, message, &text));
      return Status::Error(StatusCode::kInvalidArgument, "%.*s",
                           static_cast<int>(text.n > 230 ? 230 : text.n), text.s);
    }
    case kBuiltinStrftime:
      if (args.num_pos != 1 || !args.pos[0].is_string()) {
        return Fail(k, "strftime_now() takes one format string");
      }
      return Strftime(k, args.pos[0], out);
    default:
      return Fail(k, "internal: unknown builtin");
  }
}

Status ChatRenderer::Strftime(int32_t k, const Value& format, Value* out) {
  char fmt[128];
  if (format.n >= sizeof(fmt)) return Fail(k, "a strftime format over 127 bytes");
  std::memcpy(fmt, format.s, format.n);
  fmt[format.n] = 0;
  if (std::memchr(format.s, 0, format.n) != nullptr) return Fail(k, "a NUL in a strftime format");
  char buf[512];
  const size_t n = format.n == 0 ? 0 : std::strftime(buf, sizeof(buf), fmt, input_.now);
  char* s = nullptr;
  OCTET_RETURN_IF_ERROR(NewString(n, &s));
  std::memcpy(s, buf, n);
  *out = Value::Str(s, n);
  return Status::Ok();
}

// ---------------------------------------------------------------- methods ---

Status ChatRenderer::CallMethod(int32_t k, const Value& obj, const char* name, size_t len,
                                const Args& args, bool* handled, Value* out) {
  *handled = true;
  if (obj.is_string()) {
    const Value* a0 = args.Get(0, "");
    const Value* a1 = args.Get(1, "");
    if (NameIs(name, len, "strip") || NameIs(name, len, "lstrip") || NameIs(name, len, "rstrip")) {
      const bool left = name[0] != 'r', right = name[0] != 'l';
      const Value* chars = (a0 != nullptr && a0->kind != VKind::kNone) ? a0 : nullptr;
      if (chars != nullptr && !chars->is_string()) return Fail(k, "strip arg must be None or str");
      return Strip(k, obj, chars, left, right, out);
    }
    if (NameIs(name, len, "split")) {
      const Value* sep = args.Get(0, "sep");
      const Value* maxsplit = args.Get(1, "maxsplit");
      if (sep != nullptr && sep->kind == VKind::kNone) sep = nullptr;
      if (sep != nullptr && !sep->is_string()) return Fail(k, "must be str or None");
      if (maxsplit != nullptr && !IsIntLike(*maxsplit)) return Fail(k, "maxsplit must be an int");
      return Split(k, obj, sep, maxsplit == nullptr ? -1 : AsInt(*maxsplit), out);
    }
    if (NameIs(name, len, "startswith") || NameIs(name, len, "endswith")) {
      if (a0 == nullptr) return Fail(k, "%.*s() takes at least 1 argument", static_cast<int>(len), name);
      const bool start = name[0] == 's';
      const Value* options = a0;
      size_t count = 1;
      if (a0->kind == VKind::kList && a0->list->tuple) {
        options = a0->list->items;
        count = a0->list->size;
      } else if (!a0->is_string()) {
        return Fail(k, "%.*s first arg must be str or a tuple of str", static_cast<int>(len), name);
      }
      bool result = false;
      for (size_t j = 0; j < count; ++j) {
        const Value& p = options[j];
        if (!p.is_string()) return Fail(k, "a tuple for %.*s must hold strings", static_cast<int>(len), name);
        if (p.n <= obj.n &&
            std::memcmp(start ? obj.s : obj.s + obj.n - p.n, p.s, p.n) == 0) {
          result = true;
        }
      }
      *out = Value::Bool(result);
      return Status::Ok();
    }
    if (NameIs(name, len, "upper")) return MapCase(obj, 0, out);
    if (NameIs(name, len, "lower")) return MapCase(obj, 1, out);
    if (NameIs(name, len, "capitalize")) return MapCase(obj, 2, out);
    if (NameIs(name, len, "title")) return MapCase(obj, 4, out);
    if (NameIs(name, len, "replace")) {
      if (a0 == nullptr || a1 == nullptr || !a0->is_string() || !a1->is_string()) {
        return Fail(k, "replace() takes two strings");
      }
      const Value* count = args.Get(2, "count");
      if (count != nullptr && !IsIntLike(*count)) return Fail(k, "replace() count must be an int");
      return Replace(k, obj, *a0, *a1, count == nullptr ? -1 : AsInt(*count), out);
    }
  } else if (obj.kind == VKind::kDict) {
    if (NameIs(name, len, "items") || NameIs(name, len, "keys") || NameIs(name, len, "values")) {
      const size_t n = obj.dict->size;
      OCTET_RETURN_IF_ERROR(NewList(n, false, out));
      out->list->view = name[0] == 'k' ? 1 : name[0] == 'v' ? 2 : 3;
      for (size_t j = 0; j < n; ++j) {
        if (name[0] == 'k') {
          out->list->items[j] = obj.dict->keys[j];
        } else if (name[0] == 'v') {
          out->list->items[j] = obj.dict->values[j];
        } else {
          Value pair;
          OCTET_RETURN_IF_ERROR(NewList(2, true, &pair));
          pair.list->items[0] = obj.dict->keys[j];
          pair.list->items[1] = obj.dict->values[j];
          out->list->items[j] = pair;
        }
      }
      return Status::Ok();
    }
    if (NameIs(name, len, "get")) {
      const Value* key = args.Get(0, "");
      if (key == nullptr) return Fail(k, "get expected at least 1 argument");
      const Value* def = args.Get(1, "");
      for (size_t j = 0; j < obj.dict->size; ++j) {
        if (Equals(obj.dict->keys[j], *key)) {
          *out = obj.dict->values[j];
          return Status::Ok();
        }
      }
      *out = def != nullptr ? *def : Value::None();
      return Status::Ok();
    }
  }
  *handled = false;
  return Status::Ok();
}

Status ChatRenderer::Strip(int32_t k, const Value& s, const Value* chars, bool left, bool right,
                           Value* out) {
  auto strippable = [&](uint32_t cp) {
    if (chars == nullptr) return IsPythonSpace(cp);
    for (size_t j = 0; j < chars->n;) {
      if (DecodeLenient(chars->s, chars->n, &j) == cp) return true;
    }
    return false;
  };
  size_t begin = 0, end = s.n;
  if (left) {
    while (begin < end) {
      size_t next = begin;
      if (!strippable(DecodeLenient(s.s, end, &next))) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      const size_t start = PrevCodePointStart(s.s + begin, end - begin) + begin;
      size_t probe = start;
      if (!strippable(DecodeLenient(s.s, end, &probe))) break;
      end = start;
    }
  }
  *out = Value::Str(s.s + begin, end - begin);
  return Status::Ok();
}

Status ChatRenderer::Replace(int32_t k, const Value& s, const Value& old, const Value& with,
                             int64_t count, Value* out) {
  // Two passes: count the matches, then write.
  size_t matches = 0;
  if (old.n == 0) {
    matches = CodePointCount(s.s, s.n) + 1;
  } else {
    for (size_t j = 0; j + old.n <= s.n;) {
      if (std::memcmp(s.s + j, old.s, old.n) == 0) {
        ++matches;
        j += old.n;
      } else {
        ++j;
      }
    }
  }
  if (count >= 0 && matches > static_cast<uint64_t>(count)) matches = static_cast<size_t>(count);
  if (matches == 0) {
    *out = s;
    return Status::Ok();
  }
  if (with.n > old.n && (with.n - old.n) > (arena_->free_bytes() - s.n) / matches) {
    return OutOfScratch();
  }
  const size_t total = s.n + matches * with.n - matches * old.n;
  char* buf = nullptr;
  OCTET_RETURN_IF_ERROR(NewString(total, &buf));
  size_t w = 0, j = 0, done = 0;
  while (j <= s.n) {
    if (done < matches) {
      if (old.n == 0) {
        std::memcpy(buf + w, with.s, with.n);
        w += with.n;
        ++done;
        if (j == s.n) break;
        const size_t start = j;
        DecodeLenient(s.s, s.n, &j);
        std::memcpy(buf + w, s.s + start, j - start);
        w += j - start;
        continue;
      }
      if (j + old.n <= s.n && std::memcmp(s.s + j, old.s, old.n) == 0) {
        std::memcpy(buf + w, with.s, with.n);
        w += with.n;
        j += old.n;
        ++done;
        continue;
      }
    }
    if (j == s.n) break;
    buf[w++] = s.s[j++];
  }
  *out = Value::Str(buf, w);
  return Status::Ok();
}

Status ChatRenderer::Split(int32_t k, const Value& s, const Value* sep, int64_t maxsplit,
                           Value* out) {
  if (sep != nullptr && sep->n == 0) return Fail(k, "empty separator");
  // Pass 0 counts the parts, pass 1 stores them.
  size_t count = 0;
  for (int pass = 0; pass < 2; ++pass) {
    size_t parts = 0;
    auto emit = [&](size_t begin, size_t end) {
      if (pass == 1) out->list->items[parts] = Value::Str(s.s + begin, end - begin);
      ++parts;
    };
    int64_t splits = 0;
    if (sep != nullptr) {
      size_t begin = 0;
      for (size_t j = 0; j + sep->n <= s.n;) {
        if ((maxsplit < 0 || splits < maxsplit) && std::memcmp(s.s + j, sep->s, sep->n) == 0) {
          emit(begin, j);
          ++splits;
          j += sep->n;
          begin = j;
        } else {
          ++j;
        }
      }
      emit(begin, s.n);
    } else {
      size_t j = 0;
      for (;;) {
        // Skip whitespace, take a word; after maxsplit words the rest is one part.
        while (j < s.n) {
          size_t next = j;
          if (!IsPythonSpace(DecodeLenient(s.s, s.n, &next))) break;
          j = next;
        }
        if (j >= s.n) break;
        if (maxsplit >= 0 && splits >= maxsplit) {
          size_t end = s.n;
          while (end > j) {
            const size_t start = PrevCodePointStart(s.s, end);
            size_t probe = start;
            if (!IsPythonSpace(DecodeLenient(s.s, s.n, &probe))) break;
            end = start;
          }
          emit(j, end);
          break;
        }
        const size_t begin = j;
        while (j < s.n) {
          size_t next = j;
          if (IsPythonSpace(DecodeLenient(s.s, s.n, &next))) break;
          j = next;
        }
        emit(begin, j);
        ++splits;
      }
    }
    if (pass == 0) {
      count = parts;
      OCTET_RETURN_IF_ERROR(NewList(count, false, out));
    }
  }
  return Status::Ok();
}

// mode 0 upper, 1 lower, 2 capitalize, 3 jinja's title filter, 4 str.title.
// ASCII letters only: the templates apply these to role names.
Status ChatRenderer::MapCase(const Value& s, int mode, Value* out) {
  char* buf = nullptr;
  OCTET_RETURN_IF_ERROR(NewString(s.n, &buf));
  bool word_start = true;
  for (size_t j = 0; j < s.n; ++j) {
    const char c = s.s[j];
    char r = c;
    switch (mode) {
      case 0: r = AsciiUpper(c); break;
      case 1: r = AsciiLower(c); break;
      case 2: r = j == 0 ? AsciiUpper(c) : AsciiLower(c); break;
      case 3: {
        // Words begin after runs of whitespace, '-', '(', '{', '[' or '<'.
        const bool sep = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
                         c == '\v' || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
        r = sep ? c : (word_start ? AsciiUpper(c) : AsciiLower(c));
        word_start = sep;
        break;
      }
      default: {
        const bool cased = IsAsciiAlpha(c) || static_cast<uint8_t>(c) >= 0x80;
        r = cased ? (word_start ? AsciiUpper(c) : AsciiLower(c)) : c;
        word_start = !cased;
        break;
      }
    }
    buf[j] = r;
  }
  *out = Value::Str(buf, s.n);
  return Status::Ok();
}

// ------------------------------------------------------------ conversions ---

Status ChatRenderer::ToStr(int32_t k, const Value& v, Value* out) {
  if (v.is_string()) {
    *out = v;
    return Status::Ok();
  }
  if (v.is_undefined()) {
    *out = Value::Str("", 0);
    return Status::Ok();
  }
  TopSink sink(arena_);
  const Status s = WriteStr(k, v, &sink);
  if (!s.ok()) return s.code() == StatusCode::kOutOfMemory ? OutOfScratch() : s;
  *out = sink.Finish();
  return Status::Ok();
}

Status ChatRenderer::WriteStr(int32_t k, const Value& v, Sink* sink, int depth) {
  char buf[48];
  switch (v.kind) {
    case VKind::kUndefined: return Status::Ok();
    case VKind::kString: return Write(sink, v.s, v.n);
    case VKind::kNone: return Write(sink, "None", 4);
    case VKind::kBool: return v.b ? Write(sink, "True", 4) : Write(sink, "False", 5);
    case VKind::kInt:
      std::snprintf(buf, sizeof(buf), "%" PRId64, v.i);
      return Write(sink, buf, std::strlen(buf));
    case VKind::kFloat:
      FormatFloat(v.f, buf, sizeof(buf));
      return Write(sink, buf, std::strlen(buf));
    default:
      return WriteRepr(k, v, sink, depth);
  }
}

// Python's repr(), for lists, dicts and the strings inside them.
Status ChatRenderer::WriteRepr(int32_t k, const Value& v, Sink* sink, int depth) {
  if (depth > kMaxValueDepth) return Fail(k, "a value nested too deeply to print");
  switch (v.kind) {
    case VKind::kString: {
      bool has_single = false, has_double = false;
      for (size_t j = 0; j < v.n; ++j) {
        has_single = has_single || v.s[j] == '\'';
        has_double = has_double || v.s[j] == '"';
      }
      const char quote = (has_single && !has_double) ? '"' : '\'';
      OCTET_RETURN_IF_ERROR(Write(sink, &quote, 1));
      for (size_t j = 0; j < v.n;) {
        const size_t start = j;
        const uint32_t cp = DecodeLenient(v.s, v.n, &j);
        char esc[12];
        const char* text = nullptr;
        if (cp == '\\') {
          text = "\\\\";
        } else if (cp == static_cast<uint32_t>(quote)) {
          text = quote == '\'' ? "\\'" : "\\\"";
        } else if (cp == '\n') {
          text = "\\n";
        } else if (cp == '\r') {
          text = "\\r";
        } else if (cp == '\t') {
          text = "\\t";
        } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0xA0) || cp == 0xAD) {
          std::snprintf(esc, sizeof(esc), "\\x%02x", static_cast<unsigned>(cp));
          text = esc;
        } else if (cp & 0x80000000u) {
          std::snprintf(esc, sizeof(esc), "\\x%02x", static_cast<unsigned>(cp & 0xFF));
          text = esc;
        }
        if (text != nullptr) {
          OCTET_RETURN_IF_ERROR(Write(sink, text, std::strlen(text)));
        } else {
          OCTET_RETURN_IF_ERROR(Write(sink, v.s + start, j - start));
        }
      }
      return Write(sink, &quote, 1);
    }
    case VKind::kList: {
      const bool tuple = v.list->tuple;
      static const char* const kViews[] = {"", "dict_keys(", "dict_values(", "dict_items("};
      if (v.list->view != 0) {
        OCTET_RETURN_IF_ERROR(Write(sink, kViews[v.list->view], std::strlen(kViews[v.list->view])));
        ListObj plain = *v.list;
        plain.view = 0;
        Value as_list = v;
        as_list.list = &plain;
        OCTET_RETURN_IF_ERROR(WriteRepr(k, as_list, sink, depth + 1));
        return Write(sink, ")", 1);
      }
      OCTET_RETURN_IF_ERROR(Write(sink, tuple ? "(" : "[", 1));
      for (size_t j = 0; j < v.list->size; ++j) {
        if (j > 0) OCTET_RETURN_IF_ERROR(Write(sink, ", ", 2));
        OCTET_RETURN_IF_ERROR(WriteRepr(k, v.list->items[j], sink, depth + 1));
      }
      if (tuple && v.list->size == 1) OCTET_RETURN_IF_ERROR(Write(sink, ",", 1));
      return Write(sink, tuple ? ")" : "]", 1);
    }
    case VKind::kDict:
      OCTET_RETURN_IF_ERROR(Write(sink, "{", 1));
      for (size_t j = 0; j < v.dict->size; ++j) {
        if (j > 0) OCTET_RETURN_IF_ERROR(Write(sink, ", ", 2));
        OCTET_RETURN_IF_ERROR(WriteRepr(k, v.dict->keys[j], sink, depth + 1));
        OCTET_RETURN_IF_ERROR(Write(sink, ": ", 2));
        OCTET_RETURN_IF_ERROR(WriteRepr(k, v.dict->values[j], sink, depth + 1));
      }
      return Write(sink, "}", 1);
    case VKind::kUndefined:
      return Fail(k, "an undefined value inside a list or dict cannot be printed");
    case VKind::kNamespace:
    case VKind::kMacro:
    case VKind::kLoop:
    case VKind::kMethod:
    case VKind::kBuiltin:
      return Fail(k, "printing a %s object is not supported", KindName(v));
    default:
      return WriteStr(k, v, sink, depth + 1);
  }
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent, separators,
// sort_keys).
Status ChatRenderer::WriteJson(int32_t k, const Value& v, Sink* sink, int indent,
                               const Value& item_sep, const Value& key_sep, bool sort_keys,
                               int depth) {
  if (depth > kMaxValueDepth) return Fail(k, "a value nested too deeply for tojson");
  auto newline = [&](int level) -> Status {
    if (indent < 0) return Status::Ok();
    OCTET_RETURN_IF_ERROR(Write(sink, "\n", 1));
    for (int j = 0; j < level * indent; ++j) OCTET_RETURN_IF_ERROR(Write(sink, " ", 1));
    return Status::Ok();
  };
  char buf[48];
  switch (v.kind) {
    case VKind::kNone: return Write(sink, "null", 4);
    case VKind::kBool: return v.b ? Write(sink, "true", 4) : Write(sink, "false", 5);
    case VKind::kInt:
      std::snprintf(buf, sizeof(buf), "%" PRId64, v.i);
      return Write(sink, buf, std::strlen(buf));
    case VKind::kFloat:
      if (std::isnan(v.f)) return Write(sink, "NaN", 3);
      if (std::isinf(v.f)) return v.f < 0 ? Write(sink, "-Infinity", 9) : Write(sink, "Infinity", 8);
      FormatFloat(v.f, buf, sizeof(buf));
      return Write(sink, buf, std::strlen(buf));
    case VKind::kString: {
      OCTET_RETURN_IF_ERROR(Write(sink, "\"", 1));
      size_t run = 0;
      for (size_t j = 0; j < v.n; ++j) {
        const uint8_t c = static_cast<uint8_t>(v.s[j]);
        const char* esc = nullptr;
        char hex[8];
        if (c == '"') {
          esc = "\\\"";
        } else if (c == '\\') {
          esc = "\\\\";
        } else if (c == '\n') {
          esc = "\\n";
        } else if (c == '\r') {
          esc = "\\r";
        } else if (c == '\t') {
          esc = "\\t";
        } else if (c == '\b') {
          esc = "\\b";
        } else if (c == '\f') {
          esc = "\\f";
        } else if (c < 0x20) {
          std::snprintf(hex, sizeof(hex), "\\u%04x", c);
          esc = hex;
        }
        if (esc != nullptr) {
          OCTET_RETURN_IF_ERROR(Write(sink, v.s + run, j - run));
          OCTET_RETURN_IF_ERROR(Write(sink, esc, std::strlen(esc)));
          run = j + 1;
        }
      }
      OCTET_RETURN_IF_ERROR(Write(sink, v.s + run, v.n - run));
      return Write(sink, "\"", 1);
    }
    case VKind::kList: {
      if (v.list->size == 0) return Write(sink, "[]", 2);
      OCTET_RETURN_IF_ERROR(Write(sink, "[", 1));
      for (size_t j = 0; j < v.list->size; ++j) {
        if (j > 0) OCTET_RETURN_IF_ERROR(Write(sink, item_sep.s, item_sep.n));
        OCTET_RETURN_IF_ERROR(newline(depth + 1));
        OCTET_RETURN_IF_ERROR(WriteJson(k, v.list->items[j], sink, indent, item_sep, key_sep,
                                        sort_keys, depth + 1));
      }
      OCTET_RETURN_IF_ERROR(newline(depth));
      return Write(sink, "]", 1);
    }
    case VKind::kDict: {
      const size_t n = v.dict->size;
      if (n == 0) return Write(sink, "{}", 2);
      // The order to print: insertion order, or sorted by key (sort_keys).
      size_t* order = arena_->AllocArray<size_t>(n);
      if (order == nullptr) return OutOfScratch();
      for (size_t j = 0; j < n; ++j) order[j] = j;
      for (size_t j = 0; j < n; ++j) {
        if (!v.dict->keys[j].is_string() && !v.dict->keys[j].is_number() &&
            v.dict->keys[j].kind != VKind::kNone) {
          return Fail(k, "keys must be str, int, float, bool or None, not %s",
                      KindName(v.dict->keys[j]));
        }
      }
      if (sort_keys) {
        for (size_t j = 1; j < n; ++j) {
          for (size_t q = j; q > 0; --q) {
            bool less = false;
            OCTET_RETURN_IF_ERROR(
                Less(k, v.dict->keys[order[q]], v.dict->keys[order[q - 1]], &less));
            if (!less) break;
            const size_t t = order[q];
            order[q] = order[q - 1];
            order[q - 1] = t;
          }
        }
      }
      OCTET_RETURN_IF_ERROR(Write(sink, "{", 1));
      for (size_t j = 0; j < n; ++j) {
        const Value& key = v.dict->keys[order[j]];
        if (j > 0) OCTET_RETURN_IF_ERROR(Write(sink, item_sep.s, item_sep.n));
        OCTET_RETURN_IF_ERROR(newline(depth + 1));
        if (key.is_string()) {
          OCTET_RETURN_IF_ERROR(
              WriteJson(k, key, sink, indent, item_sep, key_sep, sort_keys, depth + 1));
        } else {
          // json.dumps turns non-string keys into strings.
          OCTET_RETURN_IF_ERROR(Write(sink, "\"", 1));
          OCTET_RETURN_IF_ERROR(
              WriteJson(k, key, sink, indent, item_sep, key_sep, sort_keys, depth + 1));
          OCTET_RETURN_IF_ERROR(Write(sink, "\"", 1));
        }
        OCTET_RETURN_IF_ERROR(Write(sink, key_sep.s, key_sep.n));
        OCTET_RETURN_IF_ERROR(WriteJson(k, v.dict->values[order[j]], sink, indent, item_sep,
                                        key_sep, sort_keys, depth + 1));
      }
      OCTET_RETURN_IF_ERROR(newline(depth));
      return Write(sink, "}", 1);
    }
    default:
      return Fail(k, "Object of type %s is not JSON serializable", KindName(v));
  }
}

Status ChatRenderer::ToInt(int32_t k, const Value& v, const Value* def, Value* out) {
  const Value fallback = def != nullptr ? *def : Value::Int(0);
  switch (v.kind) {
    case VKind::kInt:
    case VKind::kBool:
      *out = Value::Int(AsInt(v));
      return Status::Ok();
    case VKind::kFloat:
      if (!std::isfinite(v.f) || std::fabs(v.f) >= 9.2e18) {
        *out = fallback;
      } else {
        *out = Value::Int(static_cast<int64_t>(v.f));
      }
      return Status::Ok();
    case VKind::kString: {
      Value t;
      OCTET_RETURN_IF_ERROR(Strip(k, v, nullptr, true, true, &t));
      char buf[64];
      size_t n = 0;
      for (size_t j = 0; j < t.n && n + 1 < sizeof(buf); ++j) {
        if (t.s[j] != '_') buf[n++] = t.s[j];
      }
      buf[n] = 0;
      if (t.n == 0 || t.n >= sizeof(buf)) {
        *out = fallback;
        return Status::Ok();
      }
      char* end = nullptr;
      errno = 0;
      const long long i = std::strtoll(buf, &end, 10);
      if (*end == 0 && errno == 0) {
        *out = Value::Int(i);
        return Status::Ok();
      }
      const double f = std::strtod(buf, &end);
      if (*end == 0 && std::isfinite(f) && std::fabs(f) < 9.2e18) {
        *out = Value::Int(static_cast<int64_t>(f));
      } else {
        *out = fallback;
      }
      return Status::Ok();
    }
    default:
      *out = fallback;
      return Status::Ok();
  }
}

Status ChatRenderer::ToFloat(int32_t k, const Value& v, const Value* def, Value* out) {
  const Value fallback = def != nullptr ? *def : Value::Float(0.0);
  if (v.is_number()) {
    *out = Value::Float(AsDouble(v));
    return Status::Ok();
  }
  if (v.is_string()) {
    Value t;
    OCTET_RETURN_IF_ERROR(Strip(k, v, nullptr, true, true, &t));
    char buf[64];
    if (t.n == 0 || t.n >= sizeof(buf)) {
      *out = fallback;
      return Status::Ok();
    }
    std::memcpy(buf, t.s, t.n);
    buf[t.n] = 0;
    char* end = nullptr;
    const double f = std::strtod(buf, &end);
    *out = *end == 0 ? Value::Float(f) : fallback;
    return Status::Ok();
  }
  *out = fallback;
  return Status::Ok();
}

Status ChatRenderer::Indent(int32_t k, const Value& s, const Args& args, Value* out) {
  const Value* width = args.Get(0, "width");
  const Value* first = args.Get(1, "first");
  const Value* blank = args.Get(2, "blank");
  Value pad = Value::Str("    ", 4);
  if (width != nullptr && width->is_string()) {
    pad = *width;
  } else if (width != nullptr) {
    if (!IsIntLike(*width)) return Fail(k, "indent width must be an int or a string");
    const int64_t w = AsInt(*width) < 0 ? 0 : AsInt(*width);
    if (static_cast<uint64_t>(w) > arena_->free_bytes()) return OutOfScratch();
    char* p = nullptr;
    OCTET_RETURN_IF_ERROR(NewString(static_cast<size_t>(w), &p));
    std::memset(p, ' ', static_cast<size_t>(w));
    pad = Value::Str(p, static_cast<size_t>(w));
  }
  const bool indent_first = first != nullptr && Truthy(*first);
  const bool indent_blank = blank != nullptr && Truthy(*blank);
  // jinja2 appends "\n", then splits the lines (str.splitlines) and rejoins
  // them with "\n" + the padding (blank lines only when `blank`).
  ChunkSink sink(arena_, &escape_mark_);
  size_t j = 0;
  bool first_line = true;
  const size_t n = s.n;
  for (;;) {
    size_t end = j, next = j;
    bool boundary = false;
    while (end < n) {
      size_t probe = end;
      const uint32_t cp = DecodeLenient(s.s, n, &probe);
      if (cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x1C || cp == 0x1D ||
          cp == 0x1E || cp == 0x85 || cp == 0x2028 || cp == 0x2029) {
        next = probe;
        if (cp == '\r' && next < n && s.s[next] == '\n') ++next;
        boundary = true;
        break;
      }
      end = probe;
    }
    const bool empty = end == j;
    if (!first_line) OCTET_RETURN_IF_ERROR(Write(&sink, "\n", 1));
    if ((first_line && indent_first) || (!first_line && (!empty || indent_blank))) {
      OCTET_RETURN_IF_ERROR(Write(&sink, pad.s, pad.n));
    }
    OCTET_RETURN_IF_ERROR(Write(&sink, s.s + j, end - j));
    first_line = false;
    if (!boundary) break;
    j = next;
  }
  if (!sink.Finish(out)) return OutOfScratch();
  return Status::Ok();
}

// ---------------------------------------------------------------- filters ---

Status ChatRenderer::SelectAttr(int32_t k, const Value& seq, const Args& args, bool reject,
                                Value* out) {
  const Value* items = nullptr;
  size_t n = 0;
  OCTET_RETURN_IF_ERROR(Items(k, seq, &items, &n));
  if (args.num_pos == 0 || !args.pos[0].is_string()) {
    return Fail(k, "selectattr/rejectattr need an attribute name");
  }
  int test = -1;
  Args test_args;
  if (args.num_pos >= 2) {
    if (!args.pos[1].is_string()) return Fail(k, "a test name must be a string");
    for (size_t j = 0; j < kNumTestNames; ++j) {
      if (NameIs(args.pos[1].s, args.pos[1].n, kTestNames[j].name)) test = kTestNames[j].id;
    }
    if (test < 0) {
      return Fail(k, "no test named '%.*s'", static_cast<int>(args.pos[1].n), args.pos[1].s);
    }
    for (size_t j = 2; j < args.num_pos; ++j) test_args.pos[test_args.num_pos++] = args.pos[j];
  }
  Value* kept = arena_->AllocArray<Value>(n);
  if (kept == nullptr) return OutOfScratch();
  size_t num_kept = 0;
  for (size_t j = 0; j < n; ++j) {
    OCTET_RETURN_IF_ERROR(Step(k));
    Value attr;
    OCTET_RETURN_IF_ERROR(GetItem(k, items[j], args.pos[0], &attr));
    bool pass = false;
    if (test < 0) {
      pass = Truthy(attr);
    } else {
      OCTET_RETURN_IF_ERROR(ApplyTest(k, static_cast<uint16_t>(test), attr, test_args, &pass));
    }
    if (pass != reject) kept[num_kept++] = items[j];
  }
  // jinja2 returns a generator; as a list it prints and iterates the same.
  OCTET_RETURN_IF_ERROR(NewList(num_kept, false, out));
  for (size_t j = 0; j < num_kept; ++j) out->list->items[j] = kept[j];
  return Status::Ok();
}

Status ChatRenderer::ApplyFilter(int32_t k, uint16_t id, const Value& value, const Args& args,
                                 Value* out) {
  switch (id) {
    case kFilterSafe:
      *out = value;
      return Status::Ok();
    case kFilterString:
      return ToStr(k, value, out);
    case kFilterTrim: {
      Value s;
      OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
      const Value* chars = args.Get(0, "chars");
      if (chars != nullptr && chars->kind == VKind::kNone) chars = nullptr;
      if (chars != nullptr && !chars->is_string()) return Fail(k, "trim chars must be a string");
      return Strip(k, s, chars, true, true, out);
    }
    case kFilterUpper:
    case kFilterLower:
    case kFilterCapitalize:
    case kFilterTitle: {
      Value s;
      OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
      const int mode = id == kFilterUpper ? 0 : id == kFilterLower ? 1
                       : id == kFilterCapitalize                   ? 2
                                                                   : 3;
      return MapCase(s, mode, out);
    }
    case kFilterLength:
    case kFilterCount:
      switch (value.kind) {
        case VKind::kUndefined: *out = Value::Int(0); return Status::Ok();
        case VKind::kString:
          *out = Value::Int(static_cast<int64_t>(CodePointCount(value.s, value.n)));
          return Status::Ok();
        case VKind::kList: *out = Value::Int(static_cast<int64_t>(value.list->size)); return Status::Ok();
        case VKind::kDict: *out = Value::Int(static_cast<int64_t>(value.dict->size)); return Status::Ok();
        case VKind::kLoop: *out = Value::Int(static_cast<int64_t>(value.loop->length)); return Status::Ok();
        default: return Fail(k, "object of type '%s' has no len()", KindName(value));
      }
    case kFilterFirst:
    case kFilterLast: {
      const Value* items = nullptr;
      size_t n = 0;
      OCTET_RETURN_IF_ERROR(Items(k, value, &items, &n));
      *out = n == 0 ? Value::Undefined() : items[id == kFilterFirst ? 0 : n - 1];
      return Status::Ok();
    }
    case kFilterList:
    case kFilterReverse: {
      if (id == kFilterReverse && value.is_string()) {
        const Value step = Value::Int(-1);
        return Slice(k, value, nullptr, nullptr, &step, out);
      }
      const Value* items = nullptr;
      size_t n = 0;
      OCTET_RETURN_IF_ERROR(Items(k, value, &items, &n));
      OCTET_RETURN_IF_ERROR(NewList(n, false, out));
      for (size_t j = 0; j < n; ++j) {
        out->list->items[j] = items[id == kFilterReverse ? n - 1 - j : j];
      }
      return Status::Ok();
    }
    case kFilterItems:
      if (value.is_undefined()) return NewList(0, false, out);
      if (value.kind != VKind::kDict) return Fail(k, "can only get item pairs from a mapping");
      {
        bool handled = false;
        return CallMethod(k, value, "items", 5, Args(), &handled, out);
      }
    case kFilterJoin: {
      const Value* items = nullptr;
      size_t n = 0;
      OCTET_RETURN_IF_ERROR(Items(k, value, &items, &n));
      const Value* sep = args.Get(0, "d");
      const Value* attribute = args.Get(1, "attribute");
      Value sep_str = Value::Str("", 0);
      if (sep != nullptr) OCTET_RETURN_IF_ERROR(ToStr(k, *sep, &sep_str));
      ChunkSink sink(arena_, &escape_mark_);
      for (size_t j = 0; j < n; ++j) {
        if (j > 0) OCTET_RETURN_IF_ERROR(Write(&sink, sep_str.s, sep_str.n));
        Value item = items[j];
        if (attribute != nullptr) OCTET_RETURN_IF_ERROR(GetItem(k, items[j], *attribute, &item));
        OCTET_RETURN_IF_ERROR(WriteStr(k, item, &sink));
      }
      if (!sink.Finish(out)) return OutOfScratch();
      return Status::Ok();
    }
    case kFilterReplace: {
      Value s;
      OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
      const Value* old = args.Get(0, "old");
      const Value* with = args.Get(1, "new");
      const Value* count = args.Get(2, "count");
      if (old == nullptr || with == nullptr) return Fail(k, "replace needs two arguments");
      Value old_s, with_s;
      OCTET_RETURN_IF_ERROR(ToStr(k, *old, &old_s));
      OCTET_RETURN_IF_ERROR(ToStr(k, *with, &with_s));
      int64_t c = -1;
      if (count != nullptr && count->kind != VKind::kNone) {
        if (!IsIntLike(*count)) return Fail(k, "replace count must be an int");
        c = AsInt(*count);
      }
      return Replace(k, s, old_s, with_s, c, out);
    }
    case kFilterDefault: {
      const Value* def = args.Get(0, "default_value");
      const Value* boolean = args.Get(1, "boolean");
      const bool use_default =
          value.is_undefined() || (boolean != nullptr && Truthy(*boolean) && !Truthy(value));
      *out = use_default ? (def != nullptr ? *def : Value::Str("", 0)) : value;
      return Status::Ok();
    }
    case kFilterInt:
      return ToInt(k, value, args.Get(0, "default"), out);
    case kFilterFloat:
      return ToFloat(k, value, args.Get(0, "default"), out);
    case kFilterAbs:
      if (value.kind == VKind::kFloat) {
        *out = Value::Float(std::fabs(value.f));
      } else if (IsIntLike(value)) {
        if (AsInt(value) == INT64_MIN) return Fail(k, "integer overflow");
        *out = Value::Int(AsInt(value) < 0 ? -AsInt(value) : AsInt(value));
      } else {
        return Fail(k, "bad operand type for abs(): '%s'", KindName(value));
      }
      return Status::Ok();
    case kFilterTojson: {
      const Value* indent = args.Get(0, "indent");
      const Value* separators = args.Get(1, "separators");
      const Value* sort_keys = args.Get(2, "sort_keys");
      const Value* ensure_ascii = args.Get(3, "ensure_ascii");
      if (ensure_ascii != nullptr && Truthy(*ensure_ascii)) {
        return Fail(k, "tojson(ensure_ascii=True) is not supported");
      }
      int ind = -1;
      if (indent != nullptr && indent->kind != VKind::kNone) {
        if (!IsIntLike(*indent)) return Fail(k, "tojson indent must be an int");
        const int64_t i = AsInt(*indent);
        ind = i < 0 ? 0 : (i > 64 ? 64 : static_cast<int>(i));
      }
      Value item_sep = Value::Str(ind >= 0 ? "," : ", ");
      Value key_sep = Value::Str(": ");
      if (separators != nullptr && separators->kind != VKind::kNone) {
        if (separators->kind != VKind::kList || separators->list->size != 2 ||
            !separators->list->items[0].is_string() || !separators->list->items[1].is_string()) {
          return Fail(k, "tojson separators must be two strings");
        }
        item_sep = separators->list->items[0];
        key_sep = separators->list->items[1];
      }
      // The key sort needs scratch, so the JSON text is captured in chunks.
      ChunkSink sink(arena_, &escape_mark_);
      OCTET_RETURN_IF_ERROR(WriteJson(k, value, &sink, ind, item_sep, key_sep,
                                      sort_keys != nullptr && Truthy(*sort_keys), 0));
      if (!sink.Finish(out)) return OutOfScratch();
      return Status::Ok();
    }
    case kFilterIndent: {
      Value s;
      OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
      return Indent(k, s, args, out);
    }
    case kFilterSelectattr:
    case kFilterRejectattr:
      return SelectAttr(k, value, args, id == kFilterRejectattr, out);
    case kFilterMap: {
      const Value* items = nullptr;
      size_t n = 0;
      OCTET_RETURN_IF_ERROR(Items(k, value, &items, &n));
      const Value* attribute = args.Keyword("attribute");
      const Value* def = args.Keyword("default");
      int filter = -1;
      if (attribute == nullptr) {
        if (args.num_pos == 0 || !args.pos[0].is_string()) {
          return Fail(k, "map needs attribute= or a filter name");
        }
        for (size_t j = 0; j < kNumFilterNames; ++j) {
          if (NameIs(args.pos[0].s, args.pos[0].n, kFilterNames[j].name)) {
            filter = kFilterNames[j].id;
          }
        }
        if (filter < 0 || filter == kFilterMap) {
          return Fail(k, "no filter named '%.*s'", static_cast<int>(args.pos[0].n), args.pos[0].s);
        }
      }
      Args rest;
      for (size_t j = 1; j < args.num_pos; ++j) rest.pos[rest.num_pos++] = args.pos[j];
      OCTET_RETURN_IF_ERROR(NewList(n, false, out));
      for (size_t j = 0; j < n; ++j) {
        OCTET_RETURN_IF_ERROR(Step(k));
        Value mapped;
        if (attribute != nullptr) {
          OCTET_RETURN_IF_ERROR(GetItem(k, items[j], *attribute, &mapped));
          if (mapped.is_undefined() && def != nullptr) mapped = *def;
        } else {
          OCTET_RETURN_IF_ERROR(
              ApplyFilter(k, static_cast<uint16_t>(filter), items[j], rest, &mapped));
        }
        out->list->items[j] = mapped;
      }
      return Status::Ok();
    }
    default:
      return Fail(k, "internal: unknown filter");
  }
}

Status ChatRenderer::ApplyTest(int32_t k, uint16_t id, const Value& value, const Args& args,
                               bool* out) {
  const Value* arg = args.Get(0, "");
  auto need_arg = [&]() -> Status {
    if (arg == nullptr) return Fail(k, "the test '%s' needs an argument", TestName(id));
    return Status::Ok();
  };
  bool r = false;
  switch (id) {
    case kTestDefined: *out = !value.is_undefined(); return Status::Ok();
    case kTestUndefined: *out = value.is_undefined(); return Status::Ok();
    case kTestNone: *out = value.kind == VKind::kNone; return Status::Ok();
    case kTestString: *out = value.is_string(); return Status::Ok();
    case kTestNumber: *out = value.is_number(); return Status::Ok();
    case kTestInteger: *out = value.kind == VKind::kInt; return Status::Ok();
    case kTestFloat: *out = value.kind == VKind::kFloat; return Status::Ok();
    case kTestBoolean: *out = value.kind == VKind::kBool; return Status::Ok();
    case kTestTrue: *out = value.kind == VKind::kBool && value.b; return Status::Ok();
    case kTestFalse: *out = value.kind == VKind::kBool && !value.b; return Status::Ok();
    case kTestMapping: *out = value.kind == VKind::kDict; return Status::Ok();
    case kTestIterable:
    case kTestSequence:
      // jinja2's Undefined has __iter__ and __len__: it passes both tests.
      *out = value.is_undefined() || value.is_string() || value.kind == VKind::kList ||
             value.kind == VKind::kDict || (id == kTestIterable && value.kind == VKind::kLoop);
      return Status::Ok();
    case kTestLower:
    case kTestUpper: {
      Value s;
      OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
      bool cased = false, ok = true;
      for (size_t j = 0; j < s.n; ++j) {
        const char c = s.s[j];
        if (IsAsciiAlpha(c)) {
          cased = true;
          ok = ok && (id == kTestLower ? AsciiLower(c) == c : AsciiUpper(c) == c);
        }
      }
      *out = cased && ok;
      return Status::Ok();
    }
    case kTestEven:
    case kTestOdd:
      if (!IsIntLike(value)) return Fail(k, "even/odd need an integer");
      *out = ((AsInt(value) % 2) == 0) == (id == kTestEven);
      return Status::Ok();
    case kTestDivisibleby:
      OCTET_RETURN_IF_ERROR(need_arg());
      if (!IsIntLike(value) || !IsIntLike(*arg)) return Fail(k, "divisibleby needs integers");
      if (AsInt(*arg) == 0) return Fail(k, "integer division or modulo by zero");
      *out = AsInt(value) % AsInt(*arg) == 0;
      return Status::Ok();
    case kTestEq:
    case kTestNe:
      OCTET_RETURN_IF_ERROR(need_arg());
      *out = Equals(value, *arg) == (id == kTestEq);
      return Status::Ok();
    case kTestLt: OCTET_RETURN_IF_ERROR(need_arg()); return Less(k, value, *arg, out);
    case kTestGt: OCTET_RETURN_IF_ERROR(need_arg()); return Less(k, *arg, value, out);
    case kTestLe:
      OCTET_RETURN_IF_ERROR(need_arg());
      OCTET_RETURN_IF_ERROR(Less(k, *arg, value, &r));
      *out = !r;
      return Status::Ok();
    case kTestGe:
      OCTET_RETURN_IF_ERROR(need_arg());
      OCTET_RETURN_IF_ERROR(Less(k, value, *arg, &r));
      *out = !r;
      return Status::Ok();
    case kTestIn:
      OCTET_RETURN_IF_ERROR(need_arg());
      return Contains(k, *arg, value, out);
    case kTestSameas:
      OCTET_RETURN_IF_ERROR(need_arg());
      if (value.kind != arg->kind) {
        *out = false;
      } else if (value.kind == VKind::kNone || value.kind == VKind::kUndefined) {
        *out = value.kind == VKind::kNone;
      } else if (value.kind == VKind::kBool) {
        *out = value.b == arg->b;
      } else if (value.kind == VKind::kList) {
        *out = value.list == arg->list;
      } else if (value.kind == VKind::kDict) {
        *out = value.dict == arg->dict;
      } else {
        *out = Equals(value, *arg) && (!value.is_string() || value.s == arg->s);
      }
      return Status::Ok();
    default:
      return Fail(k, "internal: unknown test");
  }
}

}  // namespace octet::text

namespace octet::text {

Status ChatTemplate::Render(const ChatRenderInput& input, void* scratch, size_t scratch_size,
                            char* out, size_t out_capacity, size_t* out_size,
                            const ChatRenderLimits& limits) const {
  *out_size = 0;
  if (nodes_ == nullptr) {
    return Status(StatusCode::kInvalidArgument, "chat template: the template is empty (not parsed)");
  }
  if (input.num_messages > 0 && input.messages == nullptr) {
    return Status(StatusCode::kInvalidArgument, "chat template: messages is null");
  }
  if (out == nullptr && out_capacity > 0) {
    return Status(StatusCode::kInvalidArgument, "chat template: the output buffer is null");
  }
  ScratchArena arena(scratch, scratch == nullptr ? 0 : scratch_size);
  BufferSink sink(out, out == nullptr ? 0 : out_capacity);
  ChatRenderer renderer(nodes_, strings_, input, limits, &arena);
  const Status status = renderer.Render(root_, &sink);
  *out_size = sink.size();
  return status;
}

}  // namespace octet::text
