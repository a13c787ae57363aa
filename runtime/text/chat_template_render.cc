// Chat template rendering: scopes, statements, values' truth and equality,
// and the entry point. jinja2's semantics for the subset the parser accepts
// (Python truthiness, equality and arithmetic; jinja2's default Undefined;
// the sandbox's getattr/getitem fallbacks; HF's tojson).
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "text/chat_template_renderer.h"

namespace octet::text::chat_render {

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

namespace {

bool AsBuiltin(BuiltinId id, Value* out) {
  out->kind = VKind::kBuiltin;
  out->i = id;
  return true;
}

}  // namespace

bool ChatRenderer::Lookup(const NameExpr& node, Value* out) const {
  const char* name = Str(node.name);
  const size_t len = node.name.size;
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
  const ChatText* token = nullptr;
  switch (node.global) {
    case GlobalId::kUser:
      break;
    case GlobalId::kMessages:
      *out = messages_;
      return true;
    case GlobalId::kAddGenerationPrompt:
      *out = Value::Bool(input_.add_generation_prompt);
      return true;
    case GlobalId::kBosToken:
    case GlobalId::kEosToken:
      token = node.global == GlobalId::kBosToken ? &input_.bos_token : &input_.eos_token;
      if (!token->present) break;
      *out = Value::Str(token->text.data(), token->text.size());
      return true;
    case GlobalId::kTools:
    case GlobalId::kDocuments:
      // transformers passes tools=None and documents=None when the caller has none.
      *out = Value::None();
      return true;
    case GlobalId::kRange: return AsBuiltin(kBuiltinRange, out);
    case GlobalId::kNamespace: return AsBuiltin(kBuiltinNamespace, out);
    case GlobalId::kDict: return AsBuiltin(kBuiltinDict, out);
    case GlobalId::kRaiseException: return AsBuiltin(kBuiltinRaise, out);
    case GlobalId::kStrftimeNow:
      if (input_.now == nullptr) break;  // undefined without a clock
      return AsBuiltin(kBuiltinStrftime, out);
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
        OCTET_RETURN_IF_ERROR(Write(sink, Str(node.text.text), node.text.text.size));
        break;
      case NodeKind::kOutput: {
        Value v;
        OCTET_RETURN_IF_ERROR(Eval(node.output.expr, &v));
        OCTET_RETURN_IF_ERROR(WriteStr(k, v, sink));
        break;
      }
      case NodeKind::kIf: {
        Value cond;
        OCTET_RETURN_IF_ERROR(Eval(node.if_stmt.cond, &cond));
        if (Truthy(cond)) {
          OCTET_RETURN_IF_ERROR(Exec(node.if_stmt.body, sink));
        } else if (node.if_stmt.else_body >= 0) {
          // An elif is a single kIf statement; an else body is a list.
          OCTET_RETURN_IF_ERROR(Exec(node.if_stmt.else_body, sink));
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
        OCTET_RETURN_IF_ERROR(Exec(node.set_block.body, &capture));
        Value v;
        if (!capture.Finish(&v)) return OutOfScratch();
        OCTET_RETURN_IF_ERROR(Assign(node.set_block.target, v));
        break;
      }
      case NodeKind::kMacro: {
        Value macro;
        macro.kind = VKind::kMacro;
        macro.node = k;
        OCTET_RETURN_IF_ERROR(SetVar(Str(node.macro.name), node.macro.name.size, macro));
        break;
      }
      case NodeKind::kBreak:
        flow_ = Flow::kBreak;
        break;
      case NodeKind::kContinue:
        flow_ = Flow::kContinue;
        break;
      case NodeKind::kScope:
        OCTET_RETURN_IF_ERROR(Exec(node.scope.body, sink));
        break;
      default:
        return Fail(k, "internal: an expression node in a statement list");
    }
  }
  return Status::Ok();
}

Status ChatRenderer::ExecFor(int32_t k, Sink* sink) {
  const ForStmt& node = N(k).for_stmt;
  Value iterable;
  OCTET_RETURN_IF_ERROR(Eval(node.iterable, &iterable));
  const Value* items = nullptr;
  size_t n = 0;
  OCTET_RETURN_IF_ERROR(Items(k, iterable, &items, &n));
  if (n > limits_.max_loop_items) return Fail(k, "a loop over %zu items exceeds the limit", n);
  if (node.filter >= 0) {
    // The loop's `if` filter runs first: loop.length counts what passes.
    Value* kept = arena_->AllocArray<Value>(n);
    if (kept == nullptr) return OutOfScratch();
    size_t num_kept = 0;
    for (size_t j = 0; j < n; ++j) {
      OCTET_RETURN_IF_ERROR(Step(k));
      OCTET_RETURN_IF_ERROR(PushFrame(k, false));
      Status s = Assign(node.target, items[j]);
      Value cond;
      if (s.ok()) s = Eval(node.filter, &cond);
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
    Status s = Assign(node.target, items[j]);
    if (s.ok()) s = SetVar("loop", 4, loop_value);
    if (s.ok()) s = Exec(node.body, sink);
    PopFrame();
    OCTET_RETURN_IF_ERROR(s);
    if (escape_mark_ <= mark) ReleaseScratch(mark);
    if (flow_ == Flow::kBreak) {
      flow_ = Flow::kNormal;
      break;
    }
    flow_ = Flow::kNormal;
  }
  if (n == 0 && node.else_body >= 0) {
    OCTET_RETURN_IF_ERROR(PushFrame(k, false));
    const Status s = Exec(node.else_body, sink);
    PopFrame();
    OCTET_RETURN_IF_ERROR(s);
  }
  return Status::Ok();
}

Status ChatRenderer::Assign(int32_t target, const Value& value) {
  const ChatTemplateNode& t = N(target);
  if (t.kind == NodeKind::kName) return SetVar(Str(t.name.name), t.name.name.size, value);
  if (t.kind == NodeKind::kTuple) {
    size_t count = 0;
    for (int32_t k = t.seq.first; k >= 0; k = N(k).next) ++count;
    if (value.kind != VKind::kList || value.list->size != count) {
      return Fail(target, "cannot unpack %s into %zu names", KindName(value), count);
    }
    size_t j = 0;
    for (int32_t k = t.seq.first; k >= 0; k = N(k).next, ++j) {
      const PoolStr name = N(k).name.name;
      OCTET_RETURN_IF_ERROR(SetVar(Str(name), name.size, value.list->items[j]));
    }
    return Status::Ok();
  }
  if (t.kind == NodeKind::kGetAttr) {
    Value ns;
    Lookup(N(t.get_attr.object).name, &ns);
    if (ns.kind != VKind::kNamespace) {
      return Fail(target, "cannot assign attribute on non-namespace object");
    }
    const PoolStr attr = t.get_attr.attr;
    for (NsEntry* e = ns.ns->head; e != nullptr; e = e->next) {
      if (e->len == attr.size && std::memcmp(e->name, Str(attr), attr.size) == 0) {
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
    e->name = Str(attr);
    e->len = attr.size;
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
  OCTET_RETURN_IF_ERROR(Eval(N(k).set.value, &v));
  return Assign(N(k).set.target, v);
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

}  // namespace octet::text::chat_render

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
  chat_render::BufferSink sink(out, out == nullptr ? 0 : out_capacity);
  chat_render::ChatRenderer renderer(nodes_, strings_, input, limits, &arena);
  const Status status = renderer.Render(root_, &sink);
  *out_size = sink.size();
  return status;
}

}  // namespace octet::text
