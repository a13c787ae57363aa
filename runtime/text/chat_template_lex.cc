// Chat template lexing: jinja2's lexer rules (trim_blocks, lstrip_blocks,
// `-`/`+` whitespace control) over the normalized source, with string
// literals decoded into the string pool.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "text/chat_template_parser.h"

namespace octet::text {
namespace {

using chat_parse::kMaxParseDepth;

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

// Length of text[0, n) without its trailing Python whitespace.
size_t RstripLength(const char* s, size_t n) {
  while (n > 0) {
    const size_t start = PrevCodePointStart(s, n);
    size_t k = start;
    const uint32_t cp = DecodeLenient(s, n, &k);
    if (!IsPythonSpace(cp)) break;
    n = start;
  }
  return n;
}

// Bytes of Python whitespace at the start of s[0, n).
size_t LeadingSpace(const char* s, size_t n) {
  size_t k = 0;
  while (k < n) {
    size_t next = k;
    const uint32_t cp = DecodeLenient(s, n, &next);
    if (!IsPythonSpace(cp)) break;
    k = next;
  }
  return k;
}

}  // namespace

// ----------------------------------------------------------------- lexer ---

Status ChatTemplateParser::Lex() {
  const char* s = src_.data();
  const size_t n = src_.size();
  size_t pos = 0;
  int32_t line = 1;
  bool line_starting = true;
  const Status oom(StatusCode::kOutOfMemory, "chat_template: out of memory while parsing");
  while (pos < n) {
    // The next tag opener.
    size_t tag = pos;
    char kind = 0;
    while (tag + 1 < n) {
      if (s[tag] == '{' && (s[tag + 1] == '{' || s[tag + 1] == '%' || s[tag + 1] == '#')) {
        kind = s[tag + 1];
        break;
      }
      ++tag;
    }
    if (kind == 0) tag = n;
    size_t text_len = tag - pos;
    const char sign = (kind != 0 && tag + 2 < n) ? s[tag + 2] : 0;
    if (kind != 0 && sign == '-') {
      text_len = RstripLength(s + pos, text_len);
    } else if (kind != 0 && kind != '{' && sign != '+') {
      // lstrip_blocks: only whitespace between the line start and a block or comment tag.
      size_t l_pos = 0;
      for (size_t k = text_len; k > 0; --k) {
        if (s[pos + k - 1] == '\n') {
          l_pos = k;
          break;
        }
      }
      if ((l_pos > 0 || line_starting) && l_pos < text_len &&
          LeadingSpace(s + pos + l_pos, text_len - l_pos) == text_len - l_pos) {
        text_len = l_pos;
      }
    }
    if (text_len > 0) {
      Token t{Tok::kData, line, static_cast<uint32_t>(pool_.size()),
              static_cast<uint32_t>(text_len)};
      if (!PoolAppend(s + pos, text_len) || !tokens_.Push(t)) return oom;
    }
    for (size_t k = pos; k < tag; ++k) line += s[k] == '\n';
    if (kind == 0) break;
    pos = tag + 2;
    if (sign == '-' || sign == '+') ++pos;
    if (kind == '#') {
      size_t end = pos;
      while (end + 1 < n && !(s[end] == '#' && s[end + 1] == '}')) ++end;
      if (end + 1 >= n) {
        Token t{Tok::kEof, line, 0, 0};
        tokens_.Push(t);
        pos_ = tokens_.size() - 1;
        return Syntax("unterminated comment");
      }
      const char close_sign = end > pos ? s[end - 1] : 0;
      for (size_t k = pos; k < end; ++k) line += s[k] == '\n';
      pos = end + 2;
      if (close_sign == '-') {
        const size_t skip = LeadingSpace(s + pos, n - pos);
        for (size_t k = pos; k < pos + skip; ++k) line += s[k] == '\n';
        pos += skip;
        line_starting = skip > 0 && s[pos - 1] == '\n';
      } else if (close_sign != '+' && pos < n && s[pos] == '\n') {
        ++pos;
        ++line;
        line_starting = true;
      } else {
        line_starting = false;
      }
      continue;
    }
    const bool block = kind == '%';
    if (!PushToken(block ? Tok::kBlockBegin : Tok::kVarBegin, line, static_cast<uint32_t>(tag), 2)) {
      return oom;
    }
    OCTET_RETURN_IF_ERROR(LexTag(&pos, block, &line));
    line_starting = pos > 0 && s[pos - 1] == '\n';
  }
  if (!PushToken(Tok::kEof, line, 0, 0)) return oom;
  return Status::Ok();
}

Status ChatTemplateParser::LexTag(size_t* pos_io, bool block, int32_t* line) {
  const char* s = src_.data();
  const size_t n = src_.size();
  size_t pos = *pos_io;
  int balance = 0;
  char stack[kMaxParseDepth];
  const Status oom(StatusCode::kOutOfMemory, "chat_template: out of memory while parsing");
  for (;;) {
    while (pos < n && IsAsciiSpace(s[pos])) {
      *line += s[pos] == '\n';
      ++pos;
    }
    if (pos >= n) {
      PushToken(Tok::kEof, *line, 0, 0);
      pos_ = tokens_.size() - 1;
      return Syntax(block ? "unterminated block tag" : "unterminated expression");
    }
    const char c = s[pos];
    if (balance == 0) {
      const char close = block ? '%' : '}';
      size_t end_len = 0;
      char end_sign = 0;
      if (c == close && pos + 1 < n && s[pos + 1] == '}') {
        end_len = 2;
      } else if ((c == '-' || (block && c == '+')) && pos + 2 < n && s[pos + 1] == close &&
                 s[pos + 2] == '}') {
        end_len = 3;
        end_sign = c;
      }
      if (end_len > 0) {
        if (!PushToken(block ? Tok::kBlockEnd : Tok::kVarEnd, *line, static_cast<uint32_t>(pos),
                       static_cast<uint32_t>(end_len))) {
          return oom;
        }
        pos += end_len;
        if (end_sign == '-') {
          const size_t skip = LeadingSpace(s + pos, n - pos);
          for (size_t k = pos; k < pos + skip; ++k) *line += s[k] == '\n';
          pos += skip;
        } else if (block && end_sign == 0 && pos < n && s[pos] == '\n') {
          ++pos;  // trim_blocks
          ++*line;
        }
        *pos_io = pos;
        return Status::Ok();
      }
    }
    if (IsNameStart(c)) {
      size_t end = pos + 1;
      while (end < n && IsNameChar(s[end])) ++end;
      if (!PushToken(Tok::kName, *line, static_cast<uint32_t>(pos), static_cast<uint32_t>(end - pos))) {
        return oom;
      }
      pos = end;
      continue;
    }
    if (IsDigit(c)) {
      OCTET_RETURN_IF_ERROR(LexNumber(&pos, *line));
      continue;
    }
    if (c == '\'' || c == '"') {
      const int32_t start_line = *line;
      const size_t start = pos;
      OCTET_RETURN_IF_ERROR(LexString(&pos, start_line));
      for (size_t k = start; k < pos; ++k) *line += s[k] == '\n';
      continue;
    }
    static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    size_t op_len = 0;
    for (const char* two : kTwo) {
      if (pos + 1 < n && s[pos] == two[0] && s[pos + 1] == two[1]) op_len = 2;
    }
    if (op_len == 0 && std::strchr("+-*/%~<>=.,:|()[]{}", c) != nullptr && c != 0) op_len = 1;
    if (op_len == 0) {
      PushToken(Tok::kEof, *line, 0, 0);
      pos_ = tokens_.size() - 1;
      if (c == '!' ) return Syntax("unexpected '!'");
      return Syntax("unexpected character in a tag");
    }
    if (op_len == 1 && (c == '(' || c == '[' || c == '{')) {
      if (balance >= kMaxParseDepth) {
        PushToken(Tok::kEof, *line, 0, 0);
        pos_ = tokens_.size() - 1;
        return Unsupported("nesting deeper than 96 levels");
      }
      stack[balance++] = c == '(' ? ')' : c == '[' ? ']' : '}';
    } else if (op_len == 1 && (c == ')' || c == ']' || c == '}')) {
      if (balance == 0 || stack[balance - 1] != c) {
        PushToken(Tok::kEof, *line, 0, 0);
        pos_ = tokens_.size() - 1;
        return Syntax("unbalanced brackets");
      }
      --balance;
    }
    if (!PushToken(Tok::kOp, *line, static_cast<uint32_t>(pos), static_cast<uint32_t>(op_len))) {
      return oom;
    }
    pos += op_len;
  }
}

Status ChatTemplateParser::LexNumber(size_t* pos_io, int32_t line) {
  const char* s = src_.data();
  const size_t n = src_.size();
  size_t pos = *pos_io;
  const size_t start = pos;
  auto digits = [&](size_t* p) {
    // (\d+_)*\d+
    size_t k = *p;
    if (k >= n || !IsDigit(s[k])) return false;
    while (k < n && (IsDigit(s[k]) || (s[k] == '_' && k + 1 < n && IsDigit(s[k + 1])))) ++k;
    *p = k;
    return true;
  };
  if (s[pos] == '0' && pos + 1 < n && std::strchr("xXoObB", s[pos + 1]) != nullptr &&
      s[pos + 1] != 0) {
    PushToken(Tok::kEof, line, 0, 0);
    pos_ = tokens_.size() - 1;
    return Unsupported("a hexadecimal, octal or binary literal");
  }
  digits(&pos);
  bool is_float = false;
  size_t k = pos;
  if (k + 1 < n && s[k] == '.' && IsDigit(s[k + 1])) {
    ++k;
    digits(&k);
    pos = k;
    is_float = true;
  }
  k = pos;
  if (k < n && (s[k] == 'e' || s[k] == 'E')) {
    ++k;
    if (k < n && (s[k] == '+' || s[k] == '-')) ++k;
    if (digits(&k)) {
      pos = k;
      is_float = true;
    }
  }
  char buf[64];
  size_t len = 0;
  for (size_t q = start; q < pos; ++q) {
    if (s[q] == '_') continue;
    if (len + 1 >= sizeof(buf)) {
      PushToken(Tok::kEof, line, 0, 0);
      pos_ = tokens_.size() - 1;
      return Unsupported("a number literal this long");
    }
    buf[len++] = s[q];
  }
  buf[len] = 0;
  Token t{is_float ? Tok::kFloat : Tok::kInt, line, static_cast<uint32_t>(start),
          static_cast<uint32_t>(pos - start)};
  if (is_float) {
    t.f = std::strtod(buf, nullptr);
  } else {
    int64_t v = 0;
    for (size_t q = 0; q < len; ++q) {
      const int digit = buf[q] - '0';
      if (v > (INT64_MAX - digit) / 10) {
        PushToken(Tok::kEof, line, 0, 0);
        pos_ = tokens_.size() - 1;
        return Unsupported("an integer literal beyond 64 bits");
      }
      v = v * 10 + digit;
    }
    t.i = v;
  }
  if (!tokens_.Push(t)) return Status(StatusCode::kOutOfMemory, "chat_template: out of memory");
  *pos_io = pos;
  return Status::Ok();
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// A string literal, decoded with Python's unicode-escape rules (what jinja2
// applies): \n \t \\ \' \" \r \b \f \v \a, octal, \xHH, \uXXXX, \UXXXXXXXX;
// an unknown escape keeps its backslash.
Status ChatTemplateParser::LexString(size_t* pos_io, int32_t line) {
  const char* s = src_.data();
  const size_t n = src_.size();
  const char quote = s[*pos_io];
  size_t pos = *pos_io + 1;
  const uint32_t off = static_cast<uint32_t>(pool_.size());
  const Status oom(StatusCode::kOutOfMemory, "chat_template: out of memory while parsing");
  auto fail = [&](const char* what, bool unsupported) {
    PushToken(Tok::kEof, line, 0, 0);
    pos_ = tokens_.size() - 1;
    return unsupported ? Unsupported(what) : Syntax(what);
  };
  for (;;) {
    if (pos >= n) return fail("unterminated string literal", false);
    const char c = s[pos];
    if (c == quote) {
      ++pos;
      break;
    }
    if (c != '\\') {
      if (!PoolAppend(&s[pos], 1)) return oom;
      ++pos;
      continue;
    }
    if (pos + 1 >= n) return fail("unterminated string literal", false);
    const char e = s[pos + 1];
    pos += 2;
    char out[4];
    size_t out_len = 1;
    switch (e) {
      case 'n': out[0] = '\n'; break;
      case 't': out[0] = '\t'; break;
      case 'r': out[0] = '\r'; break;
      case '\\': out[0] = '\\'; break;
      case '\'': out[0] = '\''; break;
      case '"': out[0] = '"'; break;
      case 'b': out[0] = '\b'; break;
      case 'f': out[0] = '\f'; break;
      case 'v': out[0] = '\v'; break;
      case 'a': out[0] = '\a'; break;
      case '\n': out_len = 0; break;  // line continuation
      case 'x': case 'u': case 'U': {
        const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t k = 0; k < digits; ++k) {
          const int h = pos + k < n ? HexValue(s[pos + k]) : -1;
          if (h < 0) return fail("a truncated \\x, \\u or \\U escape", false);
          cp = (cp << 4) | static_cast<uint32_t>(h);
        }
        pos += digits;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
          return fail("a surrogate or out-of-range code point escape", true);
        }
        out_len = Utf8Encode(cp, out);
        break;
      }
      case 'N':
        return fail("a \\N{...} escape", true);
      default:
        if (e >= '0' && e <= '7') {
          uint32_t cp = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2 && pos < n && s[pos] >= '0' && s[pos] <= '7'; ++k, ++pos) {
            cp = cp * 8 + static_cast<uint32_t>(s[pos] - '0');
          }
          out_len = Utf8Encode(cp, out);
        } else {
          out[0] = '\\';
          out_len = 1;
          pos -= 1;  // the character after the backslash is kept as is
        }
        break;
    }
    if (out_len > 0 && !PoolAppend(out, out_len)) return oom;
  }
  Token t{Tok::kString, line, off, static_cast<uint32_t>(pool_.size() - off)};
  if (!tokens_.Push(t)) return oom;
  *pos_io = pos;
  return Status::Ok();
}

}  // namespace octet::text
