// Chat template rendering: jinja2's filters and tests.
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "text/chat_template_renderer.h"

namespace octet::text::chat_render {

// ---------------------------------------------------------------- filters ---

Status ChatRenderer::SelectAttr(int32_t k, const Value& seq, const Args& args, bool reject,
                                Value* out) {
  const Value* items = nullptr;
  size_t n = 0;
  OCTET_RETURN_IF_ERROR(Items(k, seq, &items, &n));
  if (args.num_pos == 0 || !args.pos[0].is_string()) {
    return Fail(k, "selectattr/rejectattr need an attribute name");
  }
  // The test's name is a value here, known only while rendering.
  bool has_test = false;
  TestId test = kTestDefined;
  Args test_args;
  if (args.num_pos >= 2) {
    if (!args.pos[1].is_string()) return Fail(k, "a test name must be a string");
    has_test = FindTest(args.pos[1].s, args.pos[1].n, &test);
    if (!has_test) {
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
    if (!has_test) {
      pass = Truthy(attr);
    } else {
      OCTET_RETURN_IF_ERROR(ApplyTest(k, test, attr, test_args, &pass));
    }
    if (pass != reject) kept[num_kept++] = items[j];
  }
  // jinja2 returns a generator; as a list it prints and iterates the same.
  OCTET_RETURN_IF_ERROR(NewList(num_kept, false, out));
  for (size_t j = 0; j < num_kept; ++j) out->list->items[j] = kept[j];
  return Status::Ok();
}

Status ChatRenderer::ApplyFilter(int32_t k, FilterId id, const Value& value, const Args& args,
                                 Value* out) {
  switch (id) {
    case kFilterAbs: return FilterAbs(k, value, out);
    case kFilterCapitalize: return FilterCase(k, value, CaseMap::kCapitalize, out);
    case kFilterCount:
    case kFilterLength: return FilterLength(k, value, out);
    case kFilterDefault: return FilterDefault(value, args, out);
    case kFilterFirst: return FilterFirstOrLast(k, value, true, out);
    case kFilterFloat: return ToFloat(k, value, args.Get(0, "default"), out);
    case kFilterIndent: return FilterIndent(k, value, args, out);
    case kFilterInt: return ToInt(k, value, args.Get(0, "default"), out);
    case kFilterItems: return FilterItems(k, value, out);
    case kFilterJoin: return FilterJoin(k, value, args, out);
    case kFilterLast: return FilterFirstOrLast(k, value, false, out);
    case kFilterList: return FilterList(k, value, false, out);
    case kFilterLower: return FilterCase(k, value, CaseMap::kLower, out);
    case kFilterMap: return FilterMap(k, value, args, out);
    case kFilterRejectattr: return SelectAttr(k, value, args, true, out);
    case kFilterReplace: return FilterReplace(k, value, args, out);
    case kFilterReverse: return FilterList(k, value, true, out);
    case kFilterSafe: *out = value; return Status::Ok();
    case kFilterSelectattr: return SelectAttr(k, value, args, false, out);
    case kFilterString: return ToStr(k, value, out);
    case kFilterTitle: return FilterCase(k, value, CaseMap::kTitleFilter, out);
    case kFilterTojson: return FilterTojson(k, value, args, out);
    case kFilterTrim: return FilterTrim(k, value, args, out);
    case kFilterUpper: return FilterCase(k, value, CaseMap::kUpper, out);
  }
  return Fail(k, "internal: unknown filter");
}

Status ChatRenderer::FilterAbs(int32_t k, const Value& value, Value* out) {
  if (value.kind == VKind::kFloat) {
    *out = Value::Float(std::fabs(value.f));
    return Status::Ok();
  }
  if (!IsIntLike(value)) return Fail(k, "bad operand type for abs(): '%s'", KindName(value));
  if (AsInt(value) == INT64_MIN) return Fail(k, "integer overflow");
  *out = Value::Int(AsInt(value) < 0 ? -AsInt(value) : AsInt(value));
  return Status::Ok();
}

Status ChatRenderer::FilterCase(int32_t k, const Value& value, CaseMap mode, Value* out) {
  Value s;
  OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
  return MapCase(s, mode, out);
}

Status ChatRenderer::FilterLength(int32_t k, const Value& value, Value* out) {
  size_t n = 0;
  switch (value.kind) {
    case VKind::kUndefined: n = 0; break;
    case VKind::kString: n = CodePointCount(value.s, value.n); break;
    case VKind::kList: n = value.list->size; break;
    case VKind::kDict: n = value.dict->size; break;
    case VKind::kLoop: n = value.loop->length; break;
    default: return Fail(k, "object of type '%s' has no len()", KindName(value));
  }
  *out = Value::Int(static_cast<int64_t>(n));
  return Status::Ok();
}

Status ChatRenderer::FilterDefault(const Value& value, const Args& args, Value* out) {
  const Value* def = args.Get(0, "default_value");
  const Value* boolean = args.Get(1, "boolean");
  const bool use_default =
      value.is_undefined() || (boolean != nullptr && Truthy(*boolean) && !Truthy(value));
  *out = use_default ? (def != nullptr ? *def : Value::Str("", 0)) : value;
  return Status::Ok();
}

Status ChatRenderer::FilterFirstOrLast(int32_t k, const Value& value, bool first, Value* out) {
  const Value* items = nullptr;
  size_t n = 0;
  OCTET_RETURN_IF_ERROR(Items(k, value, &items, &n));
  *out = n == 0 ? Value::Undefined() : items[first ? 0 : n - 1];
  return Status::Ok();
}

Status ChatRenderer::FilterIndent(int32_t k, const Value& value, const Args& args, Value* out) {
  Value s;
  OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
  return Indent(k, s, args, out);
}

Status ChatRenderer::FilterItems(int32_t k, const Value& value, Value* out) {
  if (value.is_undefined()) return NewList(0, false, out);
  if (value.kind != VKind::kDict) return Fail(k, "can only get item pairs from a mapping");
  return DictView(value, AttrId::kItems, out);
}

Status ChatRenderer::FilterJoin(int32_t k, const Value& value, const Args& args, Value* out) {
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

// list, and reverse (reverse slices a string).
Status ChatRenderer::FilterList(int32_t k, const Value& value, bool reverse, Value* out) {
  if (reverse && value.is_string()) {
    const Value step = Value::Int(-1);
    return Slice(k, value, nullptr, nullptr, &step, out);
  }
  const Value* items = nullptr;
  size_t n = 0;
  OCTET_RETURN_IF_ERROR(Items(k, value, &items, &n));
  OCTET_RETURN_IF_ERROR(NewList(n, false, out));
  for (size_t j = 0; j < n; ++j) out->list->items[j] = items[reverse ? n - 1 - j : j];
  return Status::Ok();
}

// map(attribute=..., default=...) or map('filter', args...).
Status ChatRenderer::FilterMap(int32_t k, const Value& value, const Args& args, Value* out) {
  const Value* items = nullptr;
  size_t n = 0;
  OCTET_RETURN_IF_ERROR(Items(k, value, &items, &n));
  const Value* attribute = args.Keyword("attribute");
  const Value* def = args.Keyword("default");
  FilterId filter = kFilterMap;
  if (attribute == nullptr) {
    if (args.num_pos == 0 || !args.pos[0].is_string()) {
      return Fail(k, "map needs attribute= or a filter name");
    }
    // The filter's name is a value here, known only while rendering.
    if (!FindFilter(args.pos[0].s, args.pos[0].n, &filter) || filter == kFilterMap) {
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
      OCTET_RETURN_IF_ERROR(ApplyFilter(k, filter, items[j], rest, &mapped));
    }
    out->list->items[j] = mapped;
  }
  return Status::Ok();
}

Status ChatRenderer::FilterReplace(int32_t k, const Value& value, const Args& args, Value* out) {
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

Status ChatRenderer::FilterTojson(int32_t k, const Value& value, const Args& args, Value* out) {
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

Status ChatRenderer::FilterTrim(int32_t k, const Value& value, const Args& args, Value* out) {
  Value s;
  OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
  const Value* chars = args.Get(0, "chars");
  if (chars != nullptr && chars->kind == VKind::kNone) chars = nullptr;
  if (chars != nullptr && !chars->is_string()) return Fail(k, "trim chars must be a string");
  return Strip(k, s, chars, true, true, out);
}

// `is lower` / `is upper`: some cased letter, and all of them in that case.
Status ChatRenderer::TestCase(int32_t k, const Value& value, bool lower, bool* out) {
  Value s;
  OCTET_RETURN_IF_ERROR(ToStr(k, value, &s));
  bool cased = false, ok = true;
  for (size_t j = 0; j < s.n; ++j) {
    const char c = s.s[j];
    if (IsAsciiAlpha(c)) {
      cased = true;
      ok = ok && (lower ? AsciiLower(c) == c : AsciiUpper(c) == c);
    }
  }
  *out = cased && ok;
  return Status::Ok();
}

// Python's `is`: the same object (strings: the same bytes in memory).
bool ChatRenderer::SameAs(const Value& value, const Value& arg) const {
  if (value.kind != arg.kind) return false;
  if (value.kind == VKind::kNone || value.kind == VKind::kUndefined) {
    return value.kind == VKind::kNone;
  }
  if (value.kind == VKind::kBool) return value.b == arg.b;
  if (value.kind == VKind::kList) return value.list == arg.list;
  if (value.kind == VKind::kDict) return value.dict == arg.dict;
  return Equals(value, arg) && (!value.is_string() || value.s == arg.s);
}

Status ChatRenderer::ApplyTest(int32_t k, TestId id, const Value& value, const Args& args,
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
    case kTestLower: return TestCase(k, value, true, out);
    case kTestUpper: return TestCase(k, value, false, out);
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
      *out = SameAs(value, *arg);
      return Status::Ok();
    default:
      return Fail(k, "internal: unknown test");
  }
}

}  // namespace octet::text::chat_render
