// Chat template rendering: the methods of strings and dicts, the string
// operations behind them and the filters, and conversions of values to text
// (str(), repr(), tojson) and to numbers.
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "text/chat_template_renderer.h"

namespace octet::text::chat_render {

// ---------------------------------------------------------------- methods ---

Status ChatRenderer::CallMethod(int32_t k, const Value& obj, const GetAttrExpr& method,
                                const Args& args, bool* handled, Value* out) {
  *handled = true;
  if (obj.is_string()) {
    switch (method.id) {
      case AttrId::kStrip: return StrStrip(k, obj, true, true, args, out);
      case AttrId::kLstrip: return StrStrip(k, obj, true, false, args, out);
      case AttrId::kRstrip: return StrStrip(k, obj, false, true, args, out);
      case AttrId::kSplit: return StrSplit(k, obj, args, out);
      case AttrId::kStartswith:
      case AttrId::kEndswith: return StrStartsOrEndsWith(k, obj, method, args, out);
      case AttrId::kUpper: return MapCase(obj, CaseMap::kUpper, out);
      case AttrId::kLower: return MapCase(obj, CaseMap::kLower, out);
      case AttrId::kCapitalize: return MapCase(obj, CaseMap::kCapitalize, out);
      case AttrId::kTitle: return MapCase(obj, CaseMap::kTitleMethod, out);
      case AttrId::kReplace: return StrReplace(k, obj, args, out);
      default: break;
    }
  } else if (obj.kind == VKind::kDict) {
    switch (method.id) {
      case AttrId::kItems:
      case AttrId::kKeys:
      case AttrId::kValues: return DictView(obj, method.id, out);
      case AttrId::kGet: return DictGet(k, obj, args, out);
      default: break;
    }
  }
  *handled = false;
  return Status::Ok();
}

Status ChatRenderer::StrStrip(int32_t k, const Value& obj, bool left, bool right,
                              const Args& args, Value* out) {
  const Value* a0 = args.Get(0, "");
  const Value* chars = (a0 != nullptr && a0->kind != VKind::kNone) ? a0 : nullptr;
  if (chars != nullptr && !chars->is_string()) return Fail(k, "strip arg must be None or str");
  return Strip(k, obj, chars, left, right, out);
}

Status ChatRenderer::StrSplit(int32_t k, const Value& obj, const Args& args, Value* out) {
  const Value* sep = args.Get(0, "sep");
  const Value* maxsplit = args.Get(1, "maxsplit");
  if (sep != nullptr && sep->kind == VKind::kNone) sep = nullptr;
  if (sep != nullptr && !sep->is_string()) return Fail(k, "must be str or None");
  if (maxsplit != nullptr && !IsIntLike(*maxsplit)) return Fail(k, "maxsplit must be an int");
  return Split(k, obj, sep, maxsplit == nullptr ? -1 : AsInt(*maxsplit), out);
}

Status ChatRenderer::StrStartsOrEndsWith(int32_t k, const Value& obj, const GetAttrExpr& method,
                                         const Args& args, Value* out) {
  const char* name = Str(method.attr);
  const int len = static_cast<int>(method.attr.size);
  const Value* a0 = args.Get(0, "");
  if (a0 == nullptr) return Fail(k, "%.*s() takes at least 1 argument", len, name);
  const bool start = method.id == AttrId::kStartswith;
  const Value* options = a0;
  size_t count = 1;
  if (a0->kind == VKind::kList && a0->list->tuple) {
    options = a0->list->items;
    count = a0->list->size;
  } else if (!a0->is_string()) {
    return Fail(k, "%.*s first arg must be str or a tuple of str", len, name);
  }
  bool result = false;
  for (size_t j = 0; j < count; ++j) {
    const Value& p = options[j];
    if (!p.is_string()) return Fail(k, "a tuple for %.*s must hold strings", len, name);
    if (p.n <= obj.n && std::memcmp(start ? obj.s : obj.s + obj.n - p.n, p.s, p.n) == 0) {
      result = true;
    }
  }
  *out = Value::Bool(result);
  return Status::Ok();
}

Status ChatRenderer::StrReplace(int32_t k, const Value& obj, const Args& args, Value* out) {
  const Value* a0 = args.Get(0, "");
  const Value* a1 = args.Get(1, "");
  if (a0 == nullptr || a1 == nullptr || !a0->is_string() || !a1->is_string()) {
    return Fail(k, "replace() takes two strings");
  }
  const Value* count = args.Get(2, "count");
  if (count != nullptr && !IsIntLike(*count)) return Fail(k, "replace() count must be an int");
  return Replace(k, obj, *a0, *a1, count == nullptr ? -1 : AsInt(*count), out);
}

// dict.keys(), values() or items() (`view`): a list that prints as the view.
Status ChatRenderer::DictView(const Value& obj, AttrId view, Value* out) {
  const size_t n = obj.dict->size;
  OCTET_RETURN_IF_ERROR(NewList(n, false, out));
  out->list->view = view == AttrId::kKeys ? 1 : view == AttrId::kValues ? 2 : 3;
  for (size_t j = 0; j < n; ++j) {
    if (view == AttrId::kKeys) {
      out->list->items[j] = obj.dict->keys[j];
    } else if (view == AttrId::kValues) {
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

Status ChatRenderer::DictGet(int32_t k, const Value& obj, const Args& args, Value* out) {
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

// ASCII letters only: the templates apply these to role names.
Status ChatRenderer::MapCase(const Value& s, CaseMap mode, Value* out) {
  char* buf = nullptr;
  OCTET_RETURN_IF_ERROR(NewString(s.n, &buf));
  bool word_start = true;
  for (size_t j = 0; j < s.n; ++j) {
    const char c = s.s[j];
    char r = c;
    switch (mode) {
      case CaseMap::kUpper: r = AsciiUpper(c); break;
      case CaseMap::kLower: r = AsciiLower(c); break;
      case CaseMap::kCapitalize: r = j == 0 ? AsciiUpper(c) : AsciiLower(c); break;
      case CaseMap::kTitleFilter: {
        // Words begin after runs of whitespace, '-', '(', '{', '[' or '<'.
        const bool sep = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
                         c == '\v' || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
        r = sep ? c : (word_start ? AsciiUpper(c) : AsciiLower(c));
        word_start = sep;
        break;
      }
      case CaseMap::kTitleMethod: {
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
    case VKind::kString:
      return WriteJsonString(v, sink);
    case VKind::kList: {
      if (v.list->size == 0) return Write(sink, "[]", 2);
      OCTET_RETURN_IF_ERROR(Write(sink, "[", 1));
      for (size_t j = 0; j < v.list->size; ++j) {
        if (j > 0) OCTET_RETURN_IF_ERROR(Write(sink, item_sep.s, item_sep.n));
        OCTET_RETURN_IF_ERROR(JsonNewline(sink, indent, depth + 1));
        OCTET_RETURN_IF_ERROR(WriteJson(k, v.list->items[j], sink, indent, item_sep, key_sep,
                                        sort_keys, depth + 1));
      }
      OCTET_RETURN_IF_ERROR(JsonNewline(sink, indent, depth));
      return Write(sink, "]", 1);
    }
    case VKind::kDict:
      return WriteJsonDict(k, v, sink, indent, item_sep, key_sep, sort_keys, depth);
    default:
      return Fail(k, "Object of type %s is not JSON serializable", KindName(v));
  }
}

Status ChatRenderer::JsonNewline(Sink* sink, int indent, int level) {
  if (indent < 0) return Status::Ok();
  OCTET_RETURN_IF_ERROR(Write(sink, "\n", 1));
  for (int j = 0; j < level * indent; ++j) OCTET_RETURN_IF_ERROR(Write(sink, " ", 1));
  return Status::Ok();
}

// A JSON string: json.dumps' escapes, everything else as is (ensure_ascii=False).
Status ChatRenderer::WriteJsonString(const Value& v, Sink* sink) {
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

Status ChatRenderer::WriteJsonDict(int32_t k, const Value& v, Sink* sink, int indent,
                                   const Value& item_sep, const Value& key_sep, bool sort_keys,
                                   int depth) {
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
    OCTET_RETURN_IF_ERROR(JsonNewline(sink, indent, depth + 1));
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
  OCTET_RETURN_IF_ERROR(JsonNewline(sink, indent, depth));
  return Write(sink, "}", 1);
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

}  // namespace octet::text::chat_render
