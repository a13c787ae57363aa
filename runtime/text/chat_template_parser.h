// The chat template parser's internals, shared by its files: the load-time
// growable array, the tokens, and the ChatTemplateParser class (the lexer in
// chat_template_lex.cc, the recursive-descent parser in chat_template_parse.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "core/alloc.h"
#include "core/status.h"
#include "text/chat_template.h"
#include "text/chat_template_internal.h"

namespace octet::text {
namespace chat_parse {

constexpr int kMaxParseDepth = 96;

// A growable array for load-time use, in memory from Allocate (core/alloc.h)
// so that Release hands the buffer on to a ChatTemplate, which frees it with
// Free. Push and Append return false when an allocation fails (the caller
// reports kOutOfMemory) and leave the contents as they were.
template <typename T>
class GrowArray {
  static_assert(std::is_trivially_copyable_v<T>, "GrowArray moves its elements with memcpy");

 public:
  GrowArray() = default;
  GrowArray(const GrowArray&) = delete;
  GrowArray& operator=(const GrowArray&) = delete;
  ~GrowArray() { Free(data_); }
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
    while (cap < need) {
      if (cap > SIZE_MAX / 2 / sizeof(T)) return false;
      cap *= 2;
    }
    if (cap > SIZE_MAX / sizeof(T)) return false;
    T* grown = static_cast<T*>(Allocate(cap * sizeof(T), alignof(T)));
    if (grown == nullptr) return false;
    if (size_ > 0) std::memcpy(grown, data_, size_ * sizeof(T));
    Free(data_);
    data_ = grown;
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

}  // namespace chat_parse

class ChatTemplateParser {
  using Tok = chat_parse::Tok;
  using Token = chat_parse::Token;
  template <typename T>
  using GrowArray = chat_parse::GrowArray<T>;

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
  Status Intern(std::string_view text, PoolStr* out);
  Status NewName(std::string_view text, int32_t line, int32_t* index);

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
  Status NewBinary(BinaryOp op, int32_t line, int32_t right, int32_t* out);
  Status NewLogical(NodeKind kind, int32_t line, int32_t right, int32_t* out);
  // One function per precedence level, lowest first, as jinja2's parser has
  // them: the logical operators, ...
  Status ParseOr(int32_t* out);
  Status ParseAnd(int32_t* out);
  Status ParseNot(int32_t* out);
  // ... comparisons and arithmetic (+ -, ~, * / // %, **) ...
  Status ParseCompare(int32_t* out);
  Status ParseMath1(int32_t* out);
  Status ParseConcat(int32_t* out);
  Status ParseMath2(int32_t* out);
  Status ParsePow(int32_t* out);
  // ... unary signs, then a primary with its postfixes (attributes,
  // subscripts, calls, filters, tests).
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

}  // namespace octet::text
