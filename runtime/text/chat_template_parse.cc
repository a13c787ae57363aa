// Chat template parsing: jinja2's lexer rules (trim_blocks, lstrip_blocks,
// `-`/`+` whitespace control, newline normalization, one trailing newline
// dropped) and a recursive-descent parser with jinja2's precedence. Every
// construct outside the subset is refused here, with its line.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

#include "text/chat_template.h"
#include "text/chat_template_internal.h"

namespace octet::text {

const NamedId kFilterNames[] = {
    {"abs", kFilterAbs},           {"capitalize", kFilterCapitalize}, {"count", kFilterCount},
    {"d", kFilterDefault},         {"default", kFilterDefault},
    {"first", kFilterFirst},       {"float", kFilterFloat},           {"indent", kFilterIndent},
    {"int", kFilterInt},           {"items", kFilterItems},           {"join", kFilterJoin},
    {"last", kFilterLast},         {"length", kFilterLength},         {"list", kFilterList},
    {"lower", kFilterLower},       {"map", kFilterMap},               {"rejectattr", kFilterRejectattr},
    {"replace", kFilterReplace},   {"reverse", kFilterReverse},       {"safe", kFilterSafe},
    {"selectattr", kFilterSelectattr}, {"string", kFilterString},     {"title", kFilterTitle},
    {"tojson", kFilterTojson},     {"trim", kFilterTrim},             {"upper", kFilterUpper},
};
const size_t kNumFilterNames = sizeof(kFilterNames) / sizeof(kFilterNames[0]);

const NamedId kTestNames[] = {
    {"boolean", kTestBoolean},   {"defined", kTestDefined}, {"divisibleby", kTestDivisibleby},
    {"eq", kTestEq},             {"equalto", kTestEq},      {"==", kTestEq},
    {"even", kTestEven},         {"false", kTestFalse},     {"float", kTestFloat},
    {"ge", kTestGe},             {">=", kTestGe},           {"gt", kTestGt},
    {"greaterthan", kTestGt},    {">", kTestGt},            {"in", kTestIn},
    {"integer", kTestInteger},   {"iterable", kTestIterable}, {"le", kTestLe},
    {"<=", kTestLe},             {"lower", kTestLower},     {"lt", kTestLt},
    {"lessthan", kTestLt},       {"<", kTestLt},            {"mapping", kTestMapping},
    {"ne", kTestNe},             {"!=", kTestNe},           {"none", kTestNone},
    {"number", kTestNumber},     {"odd", kTestOdd},         {"sameas", kTestSameas},
    {"sequence", kTestSequence}, {"string", kTestString},   {"true", kTestTrue},
    {"undefined", kTestUndefined}, {"upper", kTestUpper},
};
const size_t kNumTestNames = sizeof(kTestNames) / sizeof(kTestNames[0]);

const char* const kMethodNames[] = {
    "strip", "lstrip", "rstrip", "split", "startswith", "endswith", "upper", "lower",
    "replace", "title", "capitalize", "items", "keys", "values", "get",
};
const size_t kNumMethodNames = sizeof(kMethodNames) / sizeof(kMethodNames[0]);

namespace {

const char* NameOf(const NamedId* table, size_t n, uint16_t id) {
  for (size_t k = 0; k < n; ++k) {
    if (table[k].id == id) return table[k].name;
  }
  return "?";
}

}  // namespace

const char* FilterName(uint16_t id) { return NameOf(kFilterNames, kNumFilterNames, id); }
const char* TestName(uint16_t id) { return NameOf(kTestNames, kNumTestNames, id); }

namespace {

constexpr int kMaxParseDepth = 96;
constexpr size_t kMaxSourceBytes = size_t{1} << 24;

// A growable array for load-time use: malloc/realloc, no exceptions; a failed
// growth is sticky and reported once as kOutOfMemory.
template <typename T>
class GrowArray {
 public:
  ~GrowArray() { std::free(data_); }
  bool Push(const T& value) {
    if (size_ == cap_ && !Grow(size_ + 1)) return false;
    data_[size_++] = value;
    return true;
  }
  bool Append(const T* values, size_t n) {
    if (size_ + n > cap_ && !Grow(size_ + n)) return false;
    if (n > 0) std::memcpy(data_ + size_, values, n * sizeof(T));
    size_ += n;
    return true;
  }
  T* Release() {
    T* d = data_;
    data_ = nullptr;
    size_ = cap_ = 0;
    return d;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t k) { return data_[k]; }
  const T& operator[](size_t k) const { return data_[k]; }

 private:
  bool Grow(size_t need) {
    size_t cap = cap_ == 0 ? 64 : cap_;
    while (cap < need) cap *= 2;
    void* p = std::realloc(data_, cap * sizeof(T));
    if (p == nullptr) return false;
    data_ = static_cast<T*>(p);
    cap_ = cap;
    return true;
  }
  T* data_ = nullptr;
  size_t size_ = 0, cap_ = 0;
};

enum class Tok : uint8_t {
  kData, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOp, kEof,
};

struct Token {
  Tok type;
  int32_t line;
  uint32_t off, len;  // kData/kString: slice of the string pool; others: of the source
  int64_t i = 0;
  double f = 0.0;
};

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

class ChatTemplateParser {
 public:
  Status Run(std::string_view source, ChatTemplate* out);

 private:
  // --- lexing ---
  Status Lex();
  Status LexTag(size_t* pos, bool block, int32_t* line);
  Status LexString(size_t* pos, int32_t line);
  Status LexNumber(size_t* pos, int32_t line);
  bool PushToken(Tok type, int32_t line, uint32_t off, uint32_t len) {
    Token t{type, line, off, len};
    return tokens_.Push(t);
  }
  bool PoolAppend(const char* s, size_t n) { return pool_.Append(s, n); }

  // --- parsing ---
  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Peek(size_t ahead) const {
    const size_t k = pos_ + ahead;
    return tokens_[k < tokens_.size() ? k : tokens_.size() - 1];
  }
  std::string_view TokText(const Token& t) const {
    if (t.type == Tok::kData || t.type == Tok::kString) return {pool_.data() + t.off, t.len};
    return {src_.data() + t.off, t.len};
  }
  bool IsOp(const char* op) const { return Cur().type == Tok::kOp && TokText(Cur()) == op; }
  bool IsName(const char* name) const { return Cur().type == Tok::kName && TokText(Cur()) == name; }
  bool PeekIsName(size_t ahead, const char* name) const {
    return Peek(ahead).type == Tok::kName && TokText(Peek(ahead)) == name;
  }
  void Advance() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  Status Expect(const char* op);
  Status Syntax(const char* what);
  Status Unsupported(const char* what, std::string_view name = {});

  Status NewNode(NodeKind kind, int32_t line, int32_t* index);
  ChatTemplateNode& N(int32_t index) { return nodes_[static_cast<size_t>(index)]; }
  Status InternName(std::string_view text, ChatTemplateNode* node);

  Status ParseBody(const char* const* end_tags, size_t num_end_tags, int32_t* first,
                   std::string_view* end_tag);
  Status ParseStatement(int32_t* index);
  Status ParseIf(int32_t line, int32_t* index, std::string_view* end_tag);
  Status ParseFor(int32_t line, int32_t* index);
  Status ParseSet(int32_t line, int32_t* index);
  Status ParseMacro(int32_t line, int32_t* index);
  Status ExpectBlockEnd();

  Status ParseTuple(bool with_condexpr, const char* extra_end, bool explicit_parens, int32_t* out);
  Status ParseAssignTarget(bool with_namespace, const char* extra_end, int32_t* out);
  Status ParseExpression(bool with_condexpr, int32_t* out);
  Status ParseCondExpr(int32_t* out);
  Status ParseOr(int32_t* out);
  Status ParseAnd(int32_t* out);
  Status ParseNot(int32_t* out);
  Status ParseCompare(int32_t* out);
  Status ParseMath1(int32_t* out);
  Status ParseConcat(int32_t* out);
  Status ParseMath2(int32_t* out);
  Status ParsePow(int32_t* out);
  Status ParseUnary(bool with_filter, int32_t* out);
  Status ParsePrimary(int32_t* out);
  Status ParsePostfix(int32_t* node);
  Status ParseFilterExpr(int32_t* node);
  Status ParseSubscript(int32_t* node);
  Status ParseCallArgs(int32_t* first_arg);
  Status ParseCall(int32_t* node);
  Status ParseFilter(int32_t* node);
  Status ParseTest(int32_t* node);

  std::string_view src_;
  GrowArray<char> text_;  // the normalized source
  GrowArray<char> pool_;
  GrowArray<Token> tokens_;
  GrowArray<ChatTemplateNode> nodes_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  int macro_depth_ = 0;
};

namespace {

// RAII depth guard: nesting beyond kMaxParseDepth is refused (bounded stack).
class DepthGuard {
 public:
  explicit DepthGuard(int* depth) : depth_(depth) { ++*depth_; }
  ~DepthGuard() { --*depth_; }
  bool too_deep() const { return *depth_ > kMaxParseDepth; }

 private:
  int* depth_;
};

#define CT_DEPTH_GUARD()                                         \
  DepthGuard depth_guard_(&depth_);                              \
  if (depth_guard_.too_deep()) return Unsupported("nesting deeper than 96 levels")

}  // namespace

Status ChatTemplateParser::Syntax(const char* what) {
  return Status::Error(StatusCode::kInvalidArgument, "chat_template: syntax error at line %d: %s",
                       static_cast<int>(Cur().line), what);
}

Status ChatTemplateParser::Unsupported(const char* what, std::string_view name) {
  if (name.empty()) {
    return Status::Error(StatusCode::kUnsupported, "chat_template: %s at line %d is not supported",
                         what, static_cast<int>(Cur().line));
  }
  return Status::Error(StatusCode::kUnsupported,
                       "chat_template: %s '%.*s' at line %d is not supported", what,
                       static_cast<int>(name.size() > 60 ? 60 : name.size()), name.data(),
                       static_cast<int>(Cur().line));
}

Status ChatTemplateParser::Expect(const char* op) {
  if (!IsOp(op)) {
    char msg[64];
    std::snprintf(msg, sizeof(msg), "expected '%s'", op);
    return Syntax(msg);
  }
  Advance();
  return Status::Ok();
}

Status ChatTemplateParser::NewNode(NodeKind kind, int32_t line, int32_t* index) {
  ChatTemplateNode node;
  node.kind = kind;
  node.line = line;
  if (nodes_.size() >= (size_t{1} << 30) || !nodes_.Push(node)) {
    return Status(StatusCode::kOutOfMemory, "chat_template: out of memory while parsing");
  }
  *index = static_cast<int32_t>(nodes_.size() - 1);
  return Status::Ok();
}

Status ChatTemplateParser::InternName(std::string_view text, ChatTemplateNode* node) {
  node->str = static_cast<uint32_t>(pool_.size());
  node->str_len = static_cast<uint32_t>(text.size());
  if (!PoolAppend(text.data(), text.size())) {
    return Status(StatusCode::kOutOfMemory, "chat_template: out of memory while parsing");
  }
  return Status::Ok();
}

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

// ------------------------------------------------------------ statements ---

Status ChatTemplateParser::ExpectBlockEnd() {
  if (Cur().type != Tok::kBlockEnd) return Syntax("expected the end of the block tag");
  Advance();
  return Status::Ok();
}

// Parses statements until one of `end_tags` opens a block tag; leaves the
// stream on that tag's name and reports which one it was.
Status ChatTemplateParser::ParseBody(const char* const* end_tags, size_t num_end_tags,
                                     int32_t* first, std::string_view* end_tag) {
  CT_DEPTH_GUARD();
  *first = -1;
  int32_t last = -1;
  for (;;) {
    const Token& t = Cur();
    if (t.type == Tok::kEof) {
      if (num_end_tags == 0) return Status::Ok();
      char msg[96];
      std::snprintf(msg, sizeof(msg), "missing '{%% %s %%}' before the end of the template",
                    end_tags[0]);
      return Syntax(msg);
    }
    if (t.type == Tok::kBlockBegin && Peek(1).type == Tok::kName) {
      const std::string_view name = TokText(Peek(1));
      for (size_t k = 0; k < num_end_tags; ++k) {
        if (name == end_tags[k]) {
          Advance();
          *end_tag = name;
          return Status::Ok();
        }
      }
    }
    int32_t stmt = -1;
    OCTET_RETURN_IF_ERROR(ParseStatement(&stmt));
    if (stmt < 0) continue;
    if (last < 0) {
      *first = stmt;
    } else {
      N(last).next = stmt;
    }
    last = stmt;
  }
}

Status ChatTemplateParser::ParseStatement(int32_t* index) {
  const Token t = Cur();
  if (t.type == Tok::kData) {
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kText, t.line, index));
    N(*index).str = t.off;
    N(*index).str_len = t.len;
    Advance();
    return Status::Ok();
  }
  if (t.type == Tok::kVarBegin) {
    Advance();
    int32_t expr = -1;
    OCTET_RETURN_IF_ERROR(ParseTuple(true, nullptr, false, &expr));
    if (Cur().type != Tok::kVarEnd) return Syntax("expected '}}'");
    Advance();
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kOutput, t.line, index));
    N(*index).a = expr;
    return Status::Ok();
  }
  if (t.type != Tok::kBlockBegin) return Syntax("unexpected token");
  Advance();
  if (Cur().type != Tok::kName) return Syntax("expected a tag name after '{%'");
  const std::string_view name = TokText(Cur());
  const int32_t line = Cur().line;
  Advance();
  if (name == "if") {
    std::string_view end;
    return ParseIf(line, index, &end);
  }
  if (name == "for") return ParseFor(line, index);
  if (name == "set") return ParseSet(line, index);
  if (name == "macro") return ParseMacro(line, index);
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) return Syntax("'break' or 'continue' outside a for loop");
    OCTET_RETURN_IF_ERROR(
        NewNode(name == "break" ? NodeKind::kBreak : NodeKind::kContinue, line, index));
    return ExpectBlockEnd();
  }
  if (name == "generation") {
    // transformers' AssistantTracker tag: its body renders as is.
    OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kScope, line, index));
    static const char* const kEnd[] = {"endgeneration"};
    int32_t body = -1;
    std::string_view end;
    OCTET_RETURN_IF_ERROR(ParseBody(kEnd, 1, &body, &end));
    N(*index).b = body;
    Advance();
    return ExpectBlockEnd();
  }
  pos_ -= 1;  // point the message at the tag name
  static const char* const kKnown[] = {"include", "extends", "import", "from", "block", "call",
                                       "filter", "with", "raw", "autoescape", "do", "trans",
                                       "pluralize", "debug"};
  for (const char* known : kKnown) {
    if (name == known) {
      char what[48];
      std::snprintf(what, sizeof(what), "'{%% %s %%}'", known);
      return Unsupported(what);
    }
  }
  return Unsupported("the tag", name);
}

Status ChatTemplateParser::ParseIf(int32_t line, int32_t* index, std::string_view* end_tag) {
  CT_DEPTH_GUARD();
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kIf, line, index));
  int32_t cond = -1;
  OCTET_RETURN_IF_ERROR(ParseTuple(false, nullptr, false, &cond));
  N(*index).a = cond;
  OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
  static const char* const kEnds[] = {"endif", "elif", "else"};
  int32_t body = -1;
  OCTET_RETURN_IF_ERROR(ParseBody(kEnds, 3, &body, end_tag));
  N(*index).b = body;
  const int32_t tag_line = Cur().line;
  Advance();
  if (*end_tag == "elif") {
    int32_t elif = -1;
    OCTET_RETURN_IF_ERROR(ParseIf(tag_line, &elif, end_tag));
    N(*index).c = elif;
    return Status::Ok();  // the nested kIf consumed the endif
  }
  if (*end_tag == "else") {
    OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
    static const char* const kEnd[] = {"endif"};
    int32_t else_body = -1;
    OCTET_RETURN_IF_ERROR(ParseBody(kEnd, 1, &else_body, end_tag));
    N(*index).c = else_body;
    Advance();
  }
  return ExpectBlockEnd();
}

Status ChatTemplateParser::ParseFor(int32_t line, int32_t* index) {
  CT_DEPTH_GUARD();
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kFor, line, index));
  int32_t target = -1;
  OCTET_RETURN_IF_ERROR(ParseAssignTarget(false, "in", &target));
  N(*index).a = target;
  if (!IsName("in")) return Syntax("expected 'in' in a for loop");
  Advance();
  int32_t iter = -1;
  OCTET_RETURN_IF_ERROR(ParseTuple(false, "recursive", false, &iter));
  N(*index).b = iter;
  if (IsName("if")) {
    Advance();
    int32_t cond = -1;
    OCTET_RETURN_IF_ERROR(ParseExpression(true, &cond));
    N(*index).e = cond;
  }
  if (IsName("recursive")) return Unsupported("a recursive for loop");
  OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
  static const char* const kEnds[] = {"endfor", "else"};
  int32_t body = -1;
  std::string_view end;
  ++loop_depth_;
  const Status body_status = ParseBody(kEnds, 2, &body, &end);
  --loop_depth_;
  OCTET_RETURN_IF_ERROR(body_status);
  N(*index).c = body;
  Advance();
  if (end == "else") {
    OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
    static const char* const kEnd[] = {"endfor"};
    int32_t else_body = -1;
    OCTET_RETURN_IF_ERROR(ParseBody(kEnd, 1, &else_body, &end));
    N(*index).d = else_body;
    Advance();
  }
  return ExpectBlockEnd();
}

Status ChatTemplateParser::ParseSet(int32_t line, int32_t* index) {
  int32_t target = -1;
  OCTET_RETURN_IF_ERROR(ParseAssignTarget(true, nullptr, &target));
  if (IsOp("=")) {
    Advance();
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kSet, line, index));
    N(*index).a = target;
    int32_t value = -1;
    OCTET_RETURN_IF_ERROR(ParseTuple(true, nullptr, false, &value));
    N(*index).b = value;
    return ExpectBlockEnd();
  }
  if (N(target).kind != NodeKind::kName) return Syntax("a block set assigns one name");
  if (IsOp("|")) return Unsupported("a filtered block set");
  OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kSetBlock, line, index));
  N(*index).a = target;
  static const char* const kEnd[] = {"endset"};
  int32_t body = -1;
  std::string_view end;
  OCTET_RETURN_IF_ERROR(ParseBody(kEnd, 1, &body, &end));
  N(*index).b = body;
  Advance();
  return ExpectBlockEnd();
}

Status ChatTemplateParser::ParseMacro(int32_t line, int32_t* index) {
  if (Cur().type != Tok::kName) return Syntax("expected a macro name");
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kMacro, line, index));
  OCTET_RETURN_IF_ERROR(InternName(TokText(Cur()), &N(*index)));
  Advance();
  OCTET_RETURN_IF_ERROR(Expect("("));
  int32_t last = -1;
  while (!IsOp(")")) {
    if (last >= 0) OCTET_RETURN_IF_ERROR(Expect(","));
    if (IsOp(")")) break;
    if (Cur().type != Tok::kName) return Syntax("expected a parameter name");
    int32_t param = -1;
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kParam, Cur().line, &param));
    OCTET_RETURN_IF_ERROR(InternName(TokText(Cur()), &N(param)));
    Advance();
    if (IsOp("=")) {
      Advance();
      int32_t def = -1;
      OCTET_RETURN_IF_ERROR(ParseExpression(true, &def));
      N(param).a = def;
    }
    if (last < 0) {
      N(*index).a = param;
    } else {
      N(last).next = param;
    }
    last = param;
  }
  Advance();
  OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
  static const char* const kEnd[] = {"endmacro"};
  int32_t body = -1;
  std::string_view end;
  const int saved_loops = loop_depth_;
  loop_depth_ = 0;  // break/continue cannot cross a macro
  ++macro_depth_;
  const Status body_status = ParseBody(kEnd, 1, &body, &end);
  --macro_depth_;
  loop_depth_ = saved_loops;
  OCTET_RETURN_IF_ERROR(body_status);
  N(*index).b = body;
  Advance();
  return ExpectBlockEnd();
}

// ----------------------------------------------------------- expressions ---

Status ChatTemplateParser::ParseAssignTarget(bool with_namespace, const char* extra_end,
                                             int32_t* out) {
  if (Cur().type != Tok::kName) return Syntax("expected a name to assign");
  if (with_namespace && Peek(1).type == Tok::kOp && TokText(Peek(1)) == ".") {
    int32_t base = -1;
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kName, Cur().line, &base));
    OCTET_RETURN_IF_ERROR(InternName(TokText(Cur()), &N(base)));
    Advance();
    Advance();
    if (Cur().type != Tok::kName) return Syntax("expected an attribute name");
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kGetAttr, Cur().line, out));
    N(*out).a = base;
    OCTET_RETURN_IF_ERROR(InternName(TokText(Cur()), &N(*out)));
    Advance();
    return Status::Ok();
  }
  int32_t first = -1, last = -1;
  bool is_tuple = false;
  const int32_t line = Cur().line;
  for (;;) {
    if (IsOp("(")) return Unsupported("a parenthesized assignment target");
    if (Cur().type != Tok::kName) return Syntax("expected a name to assign");
    int32_t name = -1;
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kName, Cur().line, &name));
    OCTET_RETURN_IF_ERROR(InternName(TokText(Cur()), &N(name)));
    Advance();
    if (last < 0) {
      first = name;
    } else {
      N(last).next = name;
    }
    last = name;
    if (!IsOp(",")) break;
    is_tuple = true;
    Advance();
    if (extra_end != nullptr && IsName(extra_end)) break;
    if (IsOp("=")) break;
  }
  if (!is_tuple) {
    *out = first;
    return Status::Ok();
  }
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kTuple, line, out));
  N(*out).a = first;
  return Status::Ok();
}

Status ChatTemplateParser::ParseTuple(bool with_condexpr, const char* extra_end,
                                      bool explicit_parens, int32_t* out) {
  const int32_t line = Cur().line;
  int32_t first = -1, last = -1;
  bool is_tuple = false;
  for (;;) {
    if (first >= 0) OCTET_RETURN_IF_ERROR(Expect(","));
    const Tok type = Cur().type;
    if (type == Tok::kVarEnd || type == Tok::kBlockEnd || IsOp(")") ||
        (extra_end != nullptr && IsName(extra_end))) {
      break;
    }
    int32_t item = -1;
    OCTET_RETURN_IF_ERROR(ParseExpression(with_condexpr, &item));
    if (last < 0) {
      first = item;
    } else {
      N(last).next = item;
    }
    last = item;
    if (IsOp(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (first >= 0) {
      *out = first;
      return Status::Ok();
    }
    if (!explicit_parens) return Syntax("expected an expression");
  }
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kTuple, line, out));
  N(*out).a = first;
  return Status::Ok();
}

Status ChatTemplateParser::ParseExpression(bool with_condexpr, int32_t* out) {
  CT_DEPTH_GUARD();
  if (with_condexpr) return ParseCondExpr(out);
  return ParseOr(out);
}

Status ChatTemplateParser::ParseCondExpr(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseOr(out));
  while (IsName("if")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t cond = -1, other = -1;
    OCTET_RETURN_IF_ERROR(ParseOr(&cond));
    if (IsName("else")) {
      Advance();
      OCTET_RETURN_IF_ERROR(ParseExpression(true, &other));
    }
    int32_t node = -1;
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kCond, line, &node));
    N(node).a = *out;
    N(node).b = cond;
    N(node).c = other;
    *out = node;
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseOr(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseAnd(out));
  while (IsName("or")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1, node = -1;
    OCTET_RETURN_IF_ERROR(ParseAnd(&right));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kOr, line, &node));
    N(node).a = *out;
    N(node).b = right;
    *out = node;
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseAnd(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseNot(out));
  while (IsName("and")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1, node = -1;
    OCTET_RETURN_IF_ERROR(ParseNot(&right));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kAnd, line, &node));
    N(node).a = *out;
    N(node).b = right;
    *out = node;
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseNot(int32_t* out) {
  CT_DEPTH_GUARD();
  if (IsName("not")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t operand = -1;
    OCTET_RETURN_IF_ERROR(ParseNot(&operand));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kUnary, line, out));
    N(*out).op = 'n';
    N(*out).a = operand;
    return Status::Ok();
  }
  return ParseCompare(out);
}

Status ChatTemplateParser::ParseCompare(int32_t* out) {
  const int32_t line = Cur().line;
  int32_t expr = -1;
  OCTET_RETURN_IF_ERROR(ParseMath1(&expr));
  int32_t first = -1, last = -1;
  for (;;) {
    uint16_t op;
    if (IsOp("==")) {
      op = kCmpEq;
    } else if (IsOp("!=")) {
      op = kCmpNe;
    } else if (IsOp("<")) {
      op = kCmpLt;
    } else if (IsOp("<=")) {
      op = kCmpLe;
    } else if (IsOp(">")) {
      op = kCmpGt;
    } else if (IsOp(">=")) {
      op = kCmpGe;
    } else if (IsName("in")) {
      op = kCmpIn;
    } else if (IsName("not") && PeekIsName(1, "in")) {
      op = kCmpNotIn;
      Advance();
    } else {
      break;
    }
    Advance();
    int32_t operand = -1, node = -1;
    OCTET_RETURN_IF_ERROR(ParseMath1(&operand));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kCompareOp, line, &node));
    N(node).op = op;
    N(node).a = operand;
    if (last < 0) {
      first = node;
    } else {
      N(last).next = node;
    }
    last = node;
  }
  if (first < 0) {
    *out = expr;
    return Status::Ok();
  }
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kCompare, line, out));
  N(*out).a = expr;
  N(*out).b = first;
  return Status::Ok();
}

Status ChatTemplateParser::ParseMath1(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseConcat(out));
  while (IsOp("+") || IsOp("-")) {
    const uint16_t op = IsOp("+") ? kOpAdd : kOpSub;
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1, node = -1;
    OCTET_RETURN_IF_ERROR(ParseConcat(&right));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kBinary, line, &node));
    N(node).op = op;
    N(node).a = *out;
    N(node).b = right;
    *out = node;
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseConcat(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseMath2(out));
  while (IsOp("~")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1, node = -1;
    OCTET_RETURN_IF_ERROR(ParseMath2(&right));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kBinary, line, &node));
    N(node).op = kOpConcat;
    N(node).a = *out;
    N(node).b = right;
    *out = node;
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseMath2(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParsePow(out));
  for (;;) {
    uint16_t op;
    if (IsOp("*")) {
      op = kOpMul;
    } else if (IsOp("/")) {
      op = kOpDiv;
    } else if (IsOp("//")) {
      op = kOpFloorDiv;
    } else if (IsOp("%")) {
      op = kOpMod;
    } else {
      break;
    }
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1, node = -1;
    OCTET_RETURN_IF_ERROR(ParsePow(&right));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kBinary, line, &node));
    N(node).op = op;
    N(node).a = *out;
    N(node).b = right;
    *out = node;
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParsePow(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseUnary(true, out));
  while (IsOp("**")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1, node = -1;
    OCTET_RETURN_IF_ERROR(ParseUnary(true, &right));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kBinary, line, &node));
    N(node).op = kOpPow;
    N(node).a = *out;
    N(node).b = right;
    *out = node;
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseUnary(bool with_filter, int32_t* out) {
  CT_DEPTH_GUARD();
  if (IsOp("-") || IsOp("+")) {
    const uint16_t op = IsOp("-") ? '-' : '+';
    const int32_t line = Cur().line;
    Advance();
    int32_t operand = -1;
    OCTET_RETURN_IF_ERROR(ParseUnary(false, &operand));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kUnary, line, out));
    N(*out).op = op;
    N(*out).a = operand;
  } else {
    OCTET_RETURN_IF_ERROR(ParsePrimary(out));
  }
  OCTET_RETURN_IF_ERROR(ParsePostfix(out));
  if (with_filter) OCTET_RETURN_IF_ERROR(ParseFilterExpr(out));
  return Status::Ok();
}

Status ChatTemplateParser::ParsePrimary(int32_t* out) {
  CT_DEPTH_GUARD();
  const Token t = Cur();
  switch (t.type) {
    case Tok::kName: {
      const std::string_view name = TokText(t);
      Advance();
      if (name == "true" || name == "True" || name == "false" || name == "False") {
        OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, t.line, out));
        N(*out).op = kConstBool;
        N(*out).i = name[0] == 't' || name[0] == 'T';
      } else if (name == "none" || name == "None") {
        OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, t.line, out));
        N(*out).op = kConstNone;
      } else {
        OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kName, t.line, out));
        OCTET_RETURN_IF_ERROR(InternName(name, &N(*out)));
      }
      return Status::Ok();
    }
    case Tok::kString: {
      // Adjacent literals concatenate ('a' "b" is "ab"); their decoded bytes
      // are contiguous in the pool, so the slice simply widens.
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, t.line, out));
      N(*out).op = kConstString;
      N(*out).str = t.off;
      N(*out).str_len = t.len;
      Advance();
      while (Cur().type == Tok::kString) {
        const Token& more = Cur();
        if (more.off != N(*out).str + N(*out).str_len) return Syntax("bad string literal");
        N(*out).str_len += more.len;
        Advance();
      }
      return Status::Ok();
    }
    case Tok::kInt:
    case Tok::kFloat:
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, t.line, out));
      N(*out).op = t.type == Tok::kInt ? kConstInt : kConstFloat;
      N(*out).i = t.i;
      N(*out).f = t.f;
      Advance();
      return Status::Ok();
    default:
      break;
  }
  if (IsOp("(")) {
    Advance();
    OCTET_RETURN_IF_ERROR(ParseTuple(true, nullptr, true, out));
    return Expect(")");
  }
  if (IsOp("[") || IsOp("{")) {
    const bool is_list = IsOp("[");
    Advance();
    OCTET_RETURN_IF_ERROR(NewNode(is_list ? NodeKind::kList : NodeKind::kDict, t.line, out));
    int32_t last = -1;
    const char* close = is_list ? "]" : "}";
    while (!IsOp(close)) {
      if (last >= 0) OCTET_RETURN_IF_ERROR(Expect(","));
      if (IsOp(close)) break;
      int32_t item = -1;
      OCTET_RETURN_IF_ERROR(ParseExpression(true, &item));
      if (!is_list) {
        int32_t pair = -1;
        OCTET_RETURN_IF_ERROR(Expect(":"));
        int32_t value = -1;
        OCTET_RETURN_IF_ERROR(ParseExpression(true, &value));
        OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kPair, t.line, &pair));
        N(pair).a = item;
        N(pair).b = value;
        item = pair;
      }
      if (last < 0) {
        N(*out).a = item;
      } else {
        N(last).next = item;
      }
      last = item;
    }
    Advance();
    return Status::Ok();
  }
  return Syntax("expected an expression");
}

Status ChatTemplateParser::ParsePostfix(int32_t* node) {
  for (;;) {
    if (IsOp(".") || IsOp("[")) {
      OCTET_RETURN_IF_ERROR(ParseSubscript(node));
    } else if (IsOp("(")) {
      OCTET_RETURN_IF_ERROR(ParseCall(node));
    } else {
      return Status::Ok();
    }
  }
}

Status ChatTemplateParser::ParseFilterExpr(int32_t* node) {
  for (;;) {
    if (IsOp("|")) {
      OCTET_RETURN_IF_ERROR(ParseFilter(node));
    } else if (IsName("is")) {
      OCTET_RETURN_IF_ERROR(ParseTest(node));
    } else if (IsOp("(")) {
      OCTET_RETURN_IF_ERROR(ParseCall(node));
    } else {
      return Status::Ok();
    }
  }
}

Status ChatTemplateParser::ParseSubscript(int32_t* node) {
  CT_DEPTH_GUARD();
  const int32_t line = Cur().line;
  if (IsOp(".")) {
    Advance();
    if (Cur().type == Tok::kName) {
      int32_t attr = -1;
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kGetAttr, line, &attr));
      N(attr).a = *node;
      OCTET_RETURN_IF_ERROR(InternName(TokText(Cur()), &N(attr)));
      Advance();
      *node = attr;
      return Status::Ok();
    }
    if (Cur().type == Tok::kInt) {
      int32_t key = -1, item = -1;
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, line, &key));
      N(key).op = kConstInt;
      N(key).i = Cur().i;
      Advance();
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kGetItem, line, &item));
      N(item).a = *node;
      N(item).b = key;
      *node = item;
      return Status::Ok();
    }
    return Syntax("expected an attribute name after '.'");
  }
  Advance();  // '['
  int32_t parts[3] = {-1, -1, -1};
  int colons = 0;
  for (;;) {
    if (IsOp("]")) break;
    if (IsOp(":")) {
      if (++colons > 2) return Syntax("too many ':' in a slice");
      Advance();
      continue;
    }
    if (IsOp(",")) return Unsupported("a tuple subscript");
    if (parts[colons] >= 0) return Syntax("expected ':' or ']'");
    OCTET_RETURN_IF_ERROR(ParseExpression(true, &parts[colons]));
  }
  Advance();
  int32_t sub = -1;
  if (colons == 0) {
    if (parts[0] < 0) return Syntax("empty subscript");
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kGetItem, line, &sub));
    N(sub).a = *node;
    N(sub).b = parts[0];
  } else {
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kSlice, line, &sub));
    N(sub).a = *node;
    N(sub).b = parts[0];
    N(sub).c = parts[1];
    N(sub).d = parts[2];
  }
  *node = sub;
  return Status::Ok();
}

Status ChatTemplateParser::ParseCallArgs(int32_t* first_arg) {
  OCTET_RETURN_IF_ERROR(Expect("("));
  int32_t last = -1;
  *first_arg = -1;
  bool seen_keyword = false;
  while (!IsOp(")")) {
    if (last >= 0) OCTET_RETURN_IF_ERROR(Expect(","));
    if (IsOp(")")) break;
    if (IsOp("*") || IsOp("**")) return Unsupported("'*args' or '**kwargs' in a call");
    int32_t arg = -1;
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kArg, Cur().line, &arg));
    if (Cur().type == Tok::kName && Peek(1).type == Tok::kOp && TokText(Peek(1)) == "=") {
      OCTET_RETURN_IF_ERROR(InternName(TokText(Cur()), &N(arg)));
      Advance();
      Advance();
      seen_keyword = true;
    } else if (seen_keyword) {
      return Syntax("a positional argument after a keyword argument");
    }
    int32_t value = -1;
    OCTET_RETURN_IF_ERROR(ParseExpression(true, &value));
    N(arg).a = value;
    if (last < 0) {
      *first_arg = arg;
    } else {
      N(last).next = arg;
    }
    last = arg;
  }
  Advance();
  return Status::Ok();
}

Status ChatTemplateParser::ParseCall(int32_t* node) {
  CT_DEPTH_GUARD();
  const int32_t line = Cur().line;
  const ChatTemplateNode& callee = N(*node);
  if (callee.kind == NodeKind::kGetAttr) {
    const std::string_view method(pool_.data() + callee.str, callee.str_len);
    bool known = false;
    for (size_t k = 0; k < kNumMethodNames; ++k) known = known || method == kMethodNames[k];
    if (!known) return Unsupported("the method", method);
  } else if (callee.kind == NodeKind::kName) {
    const std::string_view name(pool_.data() + callee.str, callee.str_len);
    if (name == "lipsum" || name == "cycler" || name == "joiner" || name == "super" ||
        name == "caller" || name == "self" || name == "varargs" || name == "kwargs") {
      return Unsupported("the function", name);
    }
  }
  int32_t args = -1, call = -1;
  OCTET_RETURN_IF_ERROR(ParseCallArgs(&args));
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kCall, line, &call));
  N(call).a = *node;
  N(call).b = args;
  *node = call;
  return Status::Ok();
}

Status ChatTemplateParser::ParseFilter(int32_t* node) {
  CT_DEPTH_GUARD();
  const int32_t line = Cur().line;
  Advance();  // '|'
  if (Cur().type != Tok::kName) return Syntax("expected a filter name after '|'");
  const std::string_view name = TokText(Cur());
  int id = -1;
  for (size_t k = 0; k < kNumFilterNames; ++k) {
    if (name == kFilterNames[k].name) id = kFilterNames[k].id;
  }
  if (id < 0) return Unsupported("the filter", name);
  Advance();
  if (IsOp(".")) return Unsupported("a dotted filter name");
  int32_t args = -1, filter = -1;
  if (IsOp("(")) OCTET_RETURN_IF_ERROR(ParseCallArgs(&args));
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kFilter, line, &filter));
  N(filter).op = static_cast<uint16_t>(id);
  N(filter).a = *node;
  N(filter).b = args;
  *node = filter;
  return Status::Ok();
}

Status ChatTemplateParser::ParseTest(int32_t* node) {
  CT_DEPTH_GUARD();
  const int32_t line = Cur().line;
  Advance();  // 'is'
  bool negated = false;
  if (IsName("not")) {
    negated = true;
    Advance();
  }
  if (Cur().type != Tok::kName) return Syntax("expected a test name after 'is'");
  const std::string_view name = TokText(Cur());
  int id = -1;
  for (size_t k = 0; k < kNumTestNames; ++k) {
    if (name == kTestNames[k].name) id = kTestNames[k].id;
  }
  if (id < 0) return Unsupported("the test", name);
  Advance();
  int32_t args = -1;
  const Tok type = Cur().type;
  if (IsOp("(")) {
    OCTET_RETURN_IF_ERROR(ParseCallArgs(&args));
  } else if ((type == Tok::kName || type == Tok::kString || type == Tok::kInt ||
              type == Tok::kFloat || IsOp("[") || IsOp("{")) &&
             !IsName("else") && !IsName("or") && !IsName("and")) {
    if (IsName("is")) return Syntax("tests cannot be chained with 'is'");
    int32_t value = -1;
    OCTET_RETURN_IF_ERROR(ParsePrimary(&value));
    OCTET_RETURN_IF_ERROR(ParsePostfix(&value));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kArg, line, &args));
    N(args).a = value;
  }
  int32_t test = -1;
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kTest, line, &test));
  N(test).op = static_cast<uint16_t>(id);
  N(test).a = *node;
  N(test).b = args;
  N(test).i = negated ? 1 : 0;
  *node = test;
  return Status::Ok();
}

// ------------------------------------------------------------------ entry ---

Status ChatTemplateParser::Run(std::string_view source, ChatTemplate* out) {
  if (source.size() > kMaxSourceBytes) {
    return Status(StatusCode::kUnsupported, "chat_template: a template over 16 MiB");
  }
  // jinja2 reads every \r\n, \r and \n as \n and drops one trailing newline
  // (keep_trailing_newline=False).
  const Status oom(StatusCode::kOutOfMemory, "chat_template: out of memory while parsing");
  for (size_t k = 0; k < source.size(); ++k) {
    char c = source[k];
    if (c == '\r') {
      if (k + 1 < source.size() && source[k + 1] == '\n') ++k;
      c = '\n';
    }
    if (!text_.Push(c)) return oom;
  }
  size_t n = text_.size();
  if (n > 0 && text_[n - 1] == '\n') --n;
  src_ = std::string_view(text_.data() == nullptr ? "" : text_.data(), n);
  if (!pool_.Push('\0')) return oom;  // offset 0: the empty string
  OCTET_RETURN_IF_ERROR(Lex());
  pos_ = 0;
  int32_t root = -1;
  std::string_view end;
  OCTET_RETURN_IF_ERROR(ParseBody(nullptr, 0, &root, &end));
  // Unreachable leftovers such as a stray {% endif %} are errors in jinja2 too.
  if (Cur().type != Tok::kEof) return Syntax("unexpected tag");
  out->Release();
  out->num_nodes_ = static_cast<uint32_t>(nodes_.size());
  out->root_ = root;
  out->strings_size_ = static_cast<uint32_t>(pool_.size());
  if (nodes_.size() == 0) {
    ChatTemplateNode empty;
    empty.kind = NodeKind::kText;
    if (!nodes_.Push(empty)) return oom;
    out->num_nodes_ = 1;
  }
  out->nodes_ = nodes_.Release();
  out->strings_ = pool_.Release();
  return Status::Ok();
}

Result<ChatTemplate> ChatTemplate::Parse(std::string_view source) {
  ChatTemplate result;
  ChatTemplateParser parser;
  OCTET_RETURN_IF_ERROR(parser.Run(source, &result));
  return result;
}

ChatTemplate::~ChatTemplate() { Release(); }

void ChatTemplate::Release() {
  std::free(nodes_);
  std::free(strings_);
  nodes_ = nullptr;
  strings_ = nullptr;
  num_nodes_ = 0;
  strings_size_ = 0;
  root_ = -1;
}

ChatTemplate::ChatTemplate(ChatTemplate&& other) noexcept { *this = std::move(other); }

ChatTemplate& ChatTemplate::operator=(ChatTemplate&& other) noexcept {
  if (this != &other) {
    Release();
    nodes_ = other.nodes_;
    num_nodes_ = other.num_nodes_;
    root_ = other.root_;
    strings_ = other.strings_;
    strings_size_ = other.strings_size_;
    other.nodes_ = nullptr;
    other.strings_ = nullptr;
    other.num_nodes_ = 0;
    other.strings_size_ = 0;
    other.root_ = -1;
  }
  return *this;
}

}  // namespace octet::text
