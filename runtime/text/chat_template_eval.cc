// Chat template rendering: expressions (operators, attribute and item
// lookup, slices), calls of macros and of the global functions.
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "text/chat_template_renderer.h"

namespace octet::text::chat_render {

// ------------------------------------------------------------ expressions ---

Status ChatRenderer::Eval(int32_t k, Value* out) {
  const ChatTemplateNode& node = N(k);
  switch (node.kind) {
    case NodeKind::kConst:
      switch (node.constant.kind) {
        case kConstNone: *out = Value::None(); break;
        case kConstBool: *out = Value::Bool(node.constant.integer != 0); break;
        case kConstInt: *out = Value::Int(node.constant.integer); break;
        case kConstFloat: *out = Value::Float(node.constant.real); break;
        case kConstString:
          *out = Value::Str(Str(node.constant.string), node.constant.string.size);
          break;
      }
      return Status::Ok();
    case NodeKind::kName:
      Lookup(node.name, out);
      return Status::Ok();
    case NodeKind::kList:
    case NodeKind::kTuple: {
      size_t count = 0;
      for (int32_t j = node.seq.first; j >= 0; j = N(j).next) ++count;
      OCTET_RETURN_IF_ERROR(NewList(count, node.kind == NodeKind::kTuple, out));
      size_t at = 0;
      for (int32_t j = node.seq.first; j >= 0; j = N(j).next) {
        OCTET_RETURN_IF_ERROR(Eval(j, &out->list->items[at++]));
      }
      return Status::Ok();
    }
    case NodeKind::kDict:
      return EvalDict(k, out);
    case NodeKind::kGetAttr: {
      Value obj;
      const GetAttrExpr& attr = node.get_attr;
      OCTET_RETURN_IF_ERROR(Eval(attr.object, &obj));
      return GetAttr(k, obj, Str(attr.attr), attr.attr.size, attr.id, out);
    }
    case NodeKind::kGetItem: {
      Value obj, key;
      OCTET_RETURN_IF_ERROR(Eval(node.get_item.object, &obj));
      OCTET_RETURN_IF_ERROR(Eval(node.get_item.key, &key));
      return GetItem(k, obj, key, out);
    }
    case NodeKind::kSlice: {
      Value obj, parts[3];
      OCTET_RETURN_IF_ERROR(Eval(node.slice.object, &obj));
      const int32_t idx[3] = {node.slice.start, node.slice.stop, node.slice.step};
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
    case NodeKind::kUnary:
      return EvalUnary(k, out);
    case NodeKind::kBinary: {
      Value a, b;
      OCTET_RETURN_IF_ERROR(Eval(node.binary.left, &a));
      OCTET_RETURN_IF_ERROR(Eval(node.binary.right, &b));
      return Binary(k, node.binary.op, a, b, out);
    }
    case NodeKind::kCompare:
      return EvalCompare(k, out);
    case NodeKind::kAnd:
    case NodeKind::kOr: {
      // Python's and/or return an operand, not a bool.
      OCTET_RETURN_IF_ERROR(Eval(node.logical.left, out));
      if (Truthy(*out) == (node.kind == NodeKind::kOr)) return Status::Ok();
      return Eval(node.logical.right, out);
    }
    case NodeKind::kCond: {
      Value cond;
      OCTET_RETURN_IF_ERROR(Eval(node.cond.cond, &cond));
      if (Truthy(cond)) return Eval(node.cond.value, out);
      if (node.cond.else_value >= 0) return Eval(node.cond.else_value, out);
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
  const bool is_filter = node.kind == NodeKind::kFilter;
  Value value;
  OCTET_RETURN_IF_ERROR(Eval(is_filter ? node.filter.value : node.test.value, &value));
  Args args;
  OCTET_RETURN_IF_ERROR(EvalArgs(is_filter ? node.filter.first_arg : node.test.first_arg, &args));
  if (is_filter) return ApplyFilter(k, node.filter.id, value, args, out);
  bool result = false;
  OCTET_RETURN_IF_ERROR(ApplyTest(k, node.test.id, value, args, &result));
  *out = Value::Bool(node.test.negated ? !result : result);
  return Status::Ok();
}

// A dict display: later duplicate keys overwrite earlier ones, as in Python.
__attribute__((noinline)) Status ChatRenderer::EvalDict(int32_t k, Value* out) {
  const ChatTemplateNode& node = N(k);
  size_t count = 0;
  for (int32_t j = node.seq.first; j >= 0; j = N(j).next) ++count;
  auto* dict = static_cast<DictObj*>(arena_->Alloc(sizeof(DictObj), alignof(DictObj)));
  Value* keys = arena_->AllocArray<Value>(count);
  Value* values = arena_->AllocArray<Value>(count);
  if (dict == nullptr || keys == nullptr || values == nullptr) return OutOfScratch();
  size_t size = 0;
  for (int32_t j = node.seq.first; j >= 0; j = N(j).next) {
    Value key, value;
    OCTET_RETURN_IF_ERROR(Eval(N(j).pair.key, &key));
    OCTET_RETURN_IF_ERROR(Eval(N(j).pair.value, &value));
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

__attribute__((noinline)) Status ChatRenderer::EvalUnary(int32_t k, Value* out) {
  const UnaryExpr& node = N(k).unary;
  Value v;
  OCTET_RETURN_IF_ERROR(Eval(node.operand, &v));
  const bool minus = node.op == kUnaryMinus;
  if (node.op == kUnaryNot) {
    *out = Value::Bool(!Truthy(v));
    return Status::Ok();
  }
  if (v.kind == VKind::kFloat) {
    *out = Value::Float(minus ? -v.f : v.f);
    return Status::Ok();
  }
  if (IsIntLike(v)) {
    const int64_t i = AsInt(v);
    if (minus && i == INT64_MIN) return Fail(k, "integer overflow");
    *out = Value::Int(minus ? -i : i);
    return Status::Ok();
  }
  if (v.is_undefined()) return Fail(k, "'%.*s' is undefined", static_cast<int>(v.n), v.s);
  return Fail(k, "bad operand type for unary %c: '%s'", minus ? '-' : '+', KindName(v));
}

Status ChatRenderer::EvalCompare(int32_t k, Value* out) {
  Value left;
  OCTET_RETURN_IF_ERROR(Eval(N(k).compare.first, &left));
  for (int32_t j = N(k).compare.first_op; j >= 0; j = N(j).next) {
    Value right;
    OCTET_RETURN_IF_ERROR(Eval(N(j).compare_op.operand, &right));
    bool result = false;
    switch (N(j).compare_op.op) {
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

Status ChatRenderer::Binary(int32_t k, BinaryOp op, const Value& a, const Value& b, Value* out) {
  if (op == kOpConcat) {
    Value sa, sb;
    OCTET_RETURN_IF_ERROR(ToStr(k, a, &sa));
    OCTET_RETURN_IF_ERROR(ToStr(k, b, &sb));
    return Concat(sa, sb, out);
  }
  if (a.is_undefined() || b.is_undefined()) {
    const Value& u = a.is_undefined() ? a : b;
    return Fail(k, "'%.*s' is undefined", static_cast<int>(u.n), u.s);
  }
  if (a.is_number() && b.is_number()) return Arithmetic(k, op, a, b, out);
  if (op == kOpAdd && a.is_string() && b.is_string()) return Concat(a, b, out);
  if (op == kOpAdd && a.kind == VKind::kList && b.kind == VKind::kList &&
      a.list->tuple == b.list->tuple) {
    OCTET_RETURN_IF_ERROR(NewList(a.list->size + b.list->size, a.list->tuple, out));
    for (size_t j = 0; j < a.list->size; ++j) out->list->items[j] = a.list->items[j];
    for (size_t j = 0; j < b.list->size; ++j) out->list->items[a.list->size + j] = b.list->items[j];
    return Status::Ok();
  }
  if (op == kOpMul && (a.is_string() || a.kind == VKind::kList)) return Repeat(k, a, b, out);
  if (op == kOpMul && (b.is_string() || b.kind == VKind::kList)) return Repeat(k, b, a, out);
  if (op == kOpMod && a.is_string()) return Fail(k, "'%%' string formatting is not supported");
  return UnsupportedOperands(k, op, a, b);
}

Status ChatRenderer::UnsupportedOperands(int32_t k, BinaryOp op, const Value& a, const Value& b) {
  static const char* const kOpNames[] = {"+", "-", "*", "/", "//", "%", "**", "~"};
  return Fail(k, "unsupported operand type(s) for %s: '%s' and '%s'", kOpNames[op],
              KindName(a), KindName(b));
}

// Python's arithmetic on two numbers (bools count as ints): exact on ints,
// with an error where Python would leave int64.
Status ChatRenderer::Arithmetic(int32_t k, BinaryOp op, const Value& a, const Value& b,
                                Value* out) {
  const bool ints = IsIntLike(a) && IsIntLike(b);
  const int64_t x = AsInt(a), y = AsInt(b);
  const double fx = AsDouble(a), fy = AsDouble(b);
  switch (op) {
    case kOpAdd:
    case kOpSub:
    case kOpMul: {
      if (!ints) {
        *out = Value::Float(op == kOpAdd ? fx + fy : op == kOpSub ? fx - fy : fx * fy);
        return Status::Ok();
      }
      int64_t r = 0;
      const bool overflow = op == kOpAdd   ? __builtin_add_overflow(x, y, &r)
                            : op == kOpSub ? __builtin_sub_overflow(x, y, &r)
                                           : __builtin_mul_overflow(x, y, &r);
      if (overflow) return Fail(k, "integer overflow");
      *out = Value::Int(r);
      return Status::Ok();
    }
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
    case kOpConcat:
      break;
  }
  return UnsupportedOperands(k, op, a, b);
}

Status ChatRenderer::Concat(const Value& a, const Value& b, Value* out) {
  char* joined = nullptr;
  OCTET_RETURN_IF_ERROR(NewString(a.n + b.n, &joined));
  std::memcpy(joined, a.s, a.n);
  std::memcpy(joined + a.n, b.s, b.n);
  *out = Value::Str(joined, a.n + b.n);
  return Status::Ok();
}

// A string or list times an int.
Status ChatRenderer::Repeat(int32_t k, const Value& seq, const Value& times, Value* out) {
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

namespace {

Value MethodValue() {
  Value v;
  v.kind = VKind::kMethod;
  return v;
}

// loop.<id>; `name` is for the Undefined of an unknown attribute.
Value LoopAttr(const LoopObj& loop, AttrId id, const char* name, size_t len) {
  switch (id) {
    case AttrId::kIndex: return Value::Int(static_cast<int64_t>(loop.index0 + 1));
    case AttrId::kIndex0: return Value::Int(static_cast<int64_t>(loop.index0));
    case AttrId::kRevindex: return Value::Int(static_cast<int64_t>(loop.length - loop.index0));
    case AttrId::kRevindex0:
      return Value::Int(static_cast<int64_t>(loop.length - loop.index0 - 1));
    case AttrId::kFirst: return Value::Bool(loop.index0 == 0);
    case AttrId::kLast: return Value::Bool(loop.index0 + 1 == loop.length);
    case AttrId::kLength: return Value::Int(static_cast<int64_t>(loop.length));
    case AttrId::kDepth: return Value::Int(1);
    case AttrId::kDepth0: return Value::Int(0);
    case AttrId::kPrevitem:
      return loop.index0 > 0 ? loop.items[loop.index0 - 1] : Value::Undefined(name, len);
    case AttrId::kNextitem:
      return loop.index0 + 1 < loop.length ? loop.items[loop.index0 + 1]
                                           : Value::Undefined(name, len);
    default: return Value::Undefined(name, len);
  }
}

}  // namespace

Status ChatRenderer::GetAttr(int32_t k, const Value& obj, const char* name, size_t len, AttrId id,
                             Value* out) {
  switch (obj.kind) {
    case VKind::kUndefined:
      if (obj.n == 0) return Fail(k, "'%.*s' is undefined", static_cast<int>(len), name);
      return Fail(k, "'%.*s' is undefined", static_cast<int>(obj.n), obj.s);
    case VKind::kDict:
      if (IsDictMethod(id)) {
        *out = MethodValue();
        return Status::Ok();
      }
      return GetItem(k, obj, Value::Str(name, len), out);
    case VKind::kNamespace:
      for (const NsEntry* e = obj.ns->head; e != nullptr; e = e->next) {
        if (e->len == len && std::memcmp(e->name, name, len) == 0) {
          *out = *e->value;
          return Status::Ok();
        }
      }
      *out = Value::Undefined(name, len);
      return Status::Ok();
    case VKind::kLoop:
      *out = LoopAttr(*obj.loop, id, name, len);
      return Status::Ok();
    case VKind::kString:
      *out = IsCallableMethod(id) ? MethodValue() : Value::Undefined(name, len);
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
      if (key.is_string()) return GetAttr(k, obj, key.s, key.n, AttrIdOf(key.s, key.n), out);
      break;
    default:
      break;
  }
  // jinja2: a failed lookup falls back to the attribute, then to Undefined.
  if (key.is_string() && obj.kind != VKind::kDict) {
    return GetAttr(k, obj, key.s, key.n, AttrIdOf(key.s, key.n), out);
  }
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
    const ArgExpr& arg = N(j).arg;
    if (arg.keyword.size == 0) {
      if (args->num_pos >= kMaxArgs) return Fail(j, "more than 8 positional arguments");
      OCTET_RETURN_IF_ERROR(Eval(arg.value, &args->pos[args->num_pos++]));
    } else {
      if (args->num_kw >= kMaxArgs) return Fail(j, "more than 8 keyword arguments");
      args->kw_name[args->num_kw] = Str(arg.keyword);
      args->kw_len[args->num_kw] = arg.keyword.size;
      OCTET_RETURN_IF_ERROR(Eval(arg.value, &args->kw[args->num_kw++]));
    }
  }
  return Status::Ok();
}

__attribute__((noinline)) Status ChatRenderer::EvalCall(int32_t k, Value* out) {
  const CallExpr& node = N(k).call;
  OCTET_RETURN_IF_ERROR(Step(k));
  Args args;
  const ChatTemplateNode& callee = N(node.callee);
  Value fn;
  if (callee.kind == NodeKind::kGetAttr) {
    const GetAttrExpr& method = callee.get_attr;
    Value obj;
    OCTET_RETURN_IF_ERROR(Eval(method.object, &obj));
    OCTET_RETURN_IF_ERROR(EvalArgs(node.first_arg, &args));
    bool handled = false;
    OCTET_RETURN_IF_ERROR(CallMethod(k, obj, method, args, &handled, out));
    if (handled) return Status::Ok();
    OCTET_RETURN_IF_ERROR(
        GetAttr(node.callee, obj, Str(method.attr), method.attr.size, method.id, &fn));
  } else {
    OCTET_RETURN_IF_ERROR(Eval(node.callee, &fn));
    OCTET_RETURN_IF_ERROR(EvalArgs(node.first_arg, &args));
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
  const MacroStmt& def = N(macro.node).macro;
  const int name_len = static_cast<int>(def.name.size);
  size_t num_params = 0;
  for (int32_t p = def.first_param; p >= 0; p = N(p).next) ++num_params;
  if (args.num_pos > num_params) {
    return Fail(k, "macro '%.*s' takes not more than %zu argument(s)", name_len, Str(def.name),
                num_params);
  }
  for (size_t j = 0; j < args.num_kw; ++j) {
    bool known = false;
    for (int32_t p = def.first_param; p >= 0 && !known; p = N(p).next) {
      const PoolStr name = N(p).param.name;
      known = name.size == args.kw_len[j] &&
              std::memcmp(Str(name), args.kw_name[j], args.kw_len[j]) == 0;
    }
    if (!known) {
      return Fail(k, "macro '%.*s' has no argument '%.*s'", name_len, Str(def.name),
                  static_cast<int>(args.kw_len[j]), args.kw_name[j]);
    }
  }
  OCTET_RETURN_IF_ERROR(PushFrame(k, true));
  ++call_depth_;
  Status s = Status::Ok();
  size_t index = 0;
  for (int32_t p = def.first_param; p >= 0 && s.ok(); p = N(p).next, ++index) {
    const ParamDecl& param = N(p).param;
    const char* name = Str(param.name);
    const Value* given = args.Get(index, "");
    if (index >= args.num_pos) {
      given = nullptr;
      for (size_t j = 0; j < args.num_kw; ++j) {
        if (args.kw_len[j] == param.name.size &&
            std::memcmp(args.kw_name[j], name, param.name.size) == 0) {
          given = &args.kw[j];
        }
      }
    }
    Value v = Value::Undefined(name, param.name.size);
    if (given != nullptr) {
      v = *given;
    } else if (param.default_value >= 0) {
      s = Eval(param.default_value, &v);
    }
    if (s.ok()) s = SetVar(name, param.name.size, v);
  }
  ChunkSink capture(arena_, &escape_mark_);
  if (s.ok()) s = Exec(def.body, &capture);
  flow_ = Flow::kNormal;
  --call_depth_;
  PopFrame();
  OCTET_RETURN_IF_ERROR(s);
  if (!capture.Finish(out)) return OutOfScratch();
  return Status::Ok();
}

Status ChatRenderer::CallBuiltin(int32_t k, int64_t id, const Args& args, Value* out) {
  switch (id) {
    case kBuiltinRange:
      return Range(k, args, out);
    case kBuiltinNamespace:
    case kBuiltinDict:
      if (args.num_pos > 0) return Fail(k, "namespace() and dict() take keyword arguments only");
      return id == kBuiltinDict ? NewDictFromKeywords(args, out) : NewNamespace(args, out);
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

Status ChatRenderer::Range(int32_t k, const Args& args, Value* out) {
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

// dict(a=1, b=2)
Status ChatRenderer::NewDictFromKeywords(const Args& args, Value* out) {
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

// namespace(a=1, b=2)
Status ChatRenderer::NewNamespace(const Args& args, Value* out) {
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

}  // namespace octet::text::chat_render
