// Chat template parsing: newline normalization (one trailing newline dropped,
// as jinja2 does), then a recursive-descent parser with jinja2's precedence
// over the lexer's tokens. Every construct outside the subset is refused here,
// with its line.
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include "text/chat_template_parser.h"

namespace octet::text {
namespace {

using chat_parse::kMaxParseDepth;

constexpr size_t kMaxSourceBytes = size_t{1} << 24;

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
  ChatTemplateNode node(kind);
  node.line = line;
  if (nodes_.size() >= (size_t{1} << 30) || !nodes_.Push(node)) {
    return Status(StatusCode::kOutOfMemory, "chat_template: out of memory while parsing");
  }
  *index = static_cast<int32_t>(nodes_.size() - 1);
  return Status::Ok();
}

Status ChatTemplateParser::Intern(std::string_view text, PoolStr* out) {
  out->offset = static_cast<uint32_t>(pool_.size());
  out->size = static_cast<uint32_t>(text.size());
  if (!PoolAppend(text.data(), text.size())) {
    return Status(StatusCode::kOutOfMemory, "chat_template: out of memory while parsing");
  }
  return Status::Ok();
}

// A kName node, with the global it names (if any) resolved.
Status ChatTemplateParser::NewName(std::string_view text, int32_t line, int32_t* index) {
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kName, line, index));
  N(*index).name.global = GlobalIdOf(text.data(), text.size());
  return Intern(text, &N(*index).name.name);
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
    N(*index).text.text = PoolStr{t.off, t.len};
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
    N(*index).output.expr = expr;
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
    N(*index).scope.body = body;
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
  N(*index).if_stmt.cond = cond;
  OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
  static const char* const kEnds[] = {"endif", "elif", "else"};
  int32_t body = -1;
  OCTET_RETURN_IF_ERROR(ParseBody(kEnds, 3, &body, end_tag));
  N(*index).if_stmt.body = body;
  const int32_t tag_line = Cur().line;
  Advance();
  if (*end_tag == "elif") {
    int32_t elif = -1;
    OCTET_RETURN_IF_ERROR(ParseIf(tag_line, &elif, end_tag));
    N(*index).if_stmt.else_body = elif;
    return Status::Ok();  // the nested kIf consumed the endif
  }
  if (*end_tag == "else") {
    OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
    static const char* const kEnd[] = {"endif"};
    int32_t else_body = -1;
    OCTET_RETURN_IF_ERROR(ParseBody(kEnd, 1, &else_body, end_tag));
    N(*index).if_stmt.else_body = else_body;
    Advance();
  }
  return ExpectBlockEnd();
}

Status ChatTemplateParser::ParseFor(int32_t line, int32_t* index) {
  CT_DEPTH_GUARD();
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kFor, line, index));
  int32_t target = -1;
  OCTET_RETURN_IF_ERROR(ParseAssignTarget(false, "in", &target));
  N(*index).for_stmt.target = target;
  if (!IsName("in")) return Syntax("expected 'in' in a for loop");
  Advance();
  int32_t iter = -1;
  OCTET_RETURN_IF_ERROR(ParseTuple(false, "recursive", false, &iter));
  N(*index).for_stmt.iterable = iter;
  if (IsName("if")) {
    Advance();
    int32_t cond = -1;
    OCTET_RETURN_IF_ERROR(ParseExpression(true, &cond));
    N(*index).for_stmt.filter = cond;
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
  N(*index).for_stmt.body = body;
  Advance();
  if (end == "else") {
    OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
    static const char* const kEnd[] = {"endfor"};
    int32_t else_body = -1;
    OCTET_RETURN_IF_ERROR(ParseBody(kEnd, 1, &else_body, &end));
    N(*index).for_stmt.else_body = else_body;
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
    N(*index).set.target = target;
    int32_t value = -1;
    OCTET_RETURN_IF_ERROR(ParseTuple(true, nullptr, false, &value));
    N(*index).set.value = value;
    return ExpectBlockEnd();
  }
  if (N(target).kind != NodeKind::kName) return Syntax("a block set assigns one name");
  if (IsOp("|")) return Unsupported("a filtered block set");
  OCTET_RETURN_IF_ERROR(ExpectBlockEnd());
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kSetBlock, line, index));
  N(*index).set_block.target = target;
  static const char* const kEnd[] = {"endset"};
  int32_t body = -1;
  std::string_view end;
  OCTET_RETURN_IF_ERROR(ParseBody(kEnd, 1, &body, &end));
  N(*index).set_block.body = body;
  Advance();
  return ExpectBlockEnd();
}

Status ChatTemplateParser::ParseMacro(int32_t line, int32_t* index) {
  if (Cur().type != Tok::kName) return Syntax("expected a macro name");
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kMacro, line, index));
  OCTET_RETURN_IF_ERROR(Intern(TokText(Cur()), &N(*index).macro.name));
  Advance();
  OCTET_RETURN_IF_ERROR(Expect("("));
  int32_t last = -1;
  while (!IsOp(")")) {
    if (last >= 0) OCTET_RETURN_IF_ERROR(Expect(","));
    if (IsOp(")")) break;
    if (Cur().type != Tok::kName) return Syntax("expected a parameter name");
    int32_t param = -1;
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kParam, Cur().line, &param));
    OCTET_RETURN_IF_ERROR(Intern(TokText(Cur()), &N(param).param.name));
    Advance();
    if (IsOp("=")) {
      Advance();
      int32_t def = -1;
      OCTET_RETURN_IF_ERROR(ParseExpression(true, &def));
      N(param).param.default_value = def;
    }
    if (last < 0) {
      N(*index).macro.first_param = param;
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
  N(*index).macro.body = body;
  Advance();
  return ExpectBlockEnd();
}

// ----------------------------------------------------------- expressions ---

Status ChatTemplateParser::ParseAssignTarget(bool with_namespace, const char* extra_end,
                                             int32_t* out) {
  if (Cur().type != Tok::kName) return Syntax("expected a name to assign");
  if (with_namespace && Peek(1).type == Tok::kOp && TokText(Peek(1)) == ".") {
    int32_t base = -1;
    OCTET_RETURN_IF_ERROR(NewName(TokText(Cur()), Cur().line, &base));
    Advance();
    Advance();
    if (Cur().type != Tok::kName) return Syntax("expected an attribute name");
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kGetAttr, Cur().line, out));
    N(*out).get_attr.object = base;
    OCTET_RETURN_IF_ERROR(Intern(TokText(Cur()), &N(*out).get_attr.attr));
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
    OCTET_RETURN_IF_ERROR(NewName(TokText(Cur()), Cur().line, &name));
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
  N(*out).seq.first = first;
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
  N(*out).seq.first = first;
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
    N(node).cond.value = *out;
    N(node).cond.cond = cond;
    N(node).cond.else_value = other;
    *out = node;
  }
  return Status::Ok();
}

// A left-associative operator node: *out (the left operand) op right.
Status ChatTemplateParser::NewBinary(BinaryOp op, int32_t line, int32_t right, int32_t* out) {
  int32_t node = -1;
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kBinary, line, &node));
  N(node).binary.op = op;
  N(node).binary.left = *out;
  N(node).binary.right = right;
  *out = node;
  return Status::Ok();
}

// `*out and right` or `*out or right` (kind kAnd or kOr).
Status ChatTemplateParser::NewLogical(NodeKind kind, int32_t line, int32_t right, int32_t* out) {
  int32_t node = -1;
  OCTET_RETURN_IF_ERROR(NewNode(kind, line, &node));
  N(node).logical.left = *out;
  N(node).logical.right = right;
  *out = node;
  return Status::Ok();
}

Status ChatTemplateParser::ParseOr(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseAnd(out));
  while (IsName("or")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1;
    OCTET_RETURN_IF_ERROR(ParseAnd(&right));
    OCTET_RETURN_IF_ERROR(NewLogical(NodeKind::kOr, line, right, out));
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseAnd(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseNot(out));
  while (IsName("and")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1;
    OCTET_RETURN_IF_ERROR(ParseNot(&right));
    OCTET_RETURN_IF_ERROR(NewLogical(NodeKind::kAnd, line, right, out));
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
    N(*out).unary.op = kUnaryNot;
    N(*out).unary.operand = operand;
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
    CompareOp op;
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
    N(node).compare_op.op = op;
    N(node).compare_op.operand = operand;
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
  N(*out).compare.first = expr;
  N(*out).compare.first_op = first;
  return Status::Ok();
}

Status ChatTemplateParser::ParseMath1(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseConcat(out));
  while (IsOp("+") || IsOp("-")) {
    const BinaryOp op = IsOp("+") ? kOpAdd : kOpSub;
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1;
    OCTET_RETURN_IF_ERROR(ParseConcat(&right));
    OCTET_RETURN_IF_ERROR(NewBinary(op, line, right, out));
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseConcat(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseMath2(out));
  while (IsOp("~")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1;
    OCTET_RETURN_IF_ERROR(ParseMath2(&right));
    OCTET_RETURN_IF_ERROR(NewBinary(kOpConcat, line, right, out));
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseMath2(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParsePow(out));
  for (;;) {
    BinaryOp op;
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
    int32_t right = -1;
    OCTET_RETURN_IF_ERROR(ParsePow(&right));
    OCTET_RETURN_IF_ERROR(NewBinary(op, line, right, out));
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParsePow(int32_t* out) {
  OCTET_RETURN_IF_ERROR(ParseUnary(true, out));
  while (IsOp("**")) {
    const int32_t line = Cur().line;
    Advance();
    int32_t right = -1;
    OCTET_RETURN_IF_ERROR(ParseUnary(true, &right));
    OCTET_RETURN_IF_ERROR(NewBinary(kOpPow, line, right, out));
  }
  return Status::Ok();
}

Status ChatTemplateParser::ParseUnary(bool with_filter, int32_t* out) {
  CT_DEPTH_GUARD();
  if (IsOp("-") || IsOp("+")) {
    const UnaryOp op = IsOp("-") ? kUnaryMinus : kUnaryPlus;
    const int32_t line = Cur().line;
    Advance();
    int32_t operand = -1;
    OCTET_RETURN_IF_ERROR(ParseUnary(false, &operand));
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kUnary, line, out));
    N(*out).unary.op = op;
    N(*out).unary.operand = operand;
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
        N(*out).constant.kind = kConstBool;
        N(*out).constant.integer = name[0] == 't' || name[0] == 'T';
      } else if (name == "none" || name == "None") {
        OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, t.line, out));
        N(*out).constant.kind = kConstNone;
      } else {
        OCTET_RETURN_IF_ERROR(NewName(name, t.line, out));
      }
      return Status::Ok();
    }
    case Tok::kString: {
      // Adjacent literals concatenate ('a' "b" is "ab"); their decoded bytes
      // are contiguous in the pool, so the slice simply widens.
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, t.line, out));
      N(*out).constant.kind = kConstString;
      N(*out).constant.string = PoolStr{t.off, t.len};
      Advance();
      while (Cur().type == Tok::kString) {
        const Token& more = Cur();
        PoolStr& string = N(*out).constant.string;
        if (more.off != string.offset + string.size) return Syntax("bad string literal");
        string.size += more.len;
        Advance();
      }
      return Status::Ok();
    }
    case Tok::kInt:
    case Tok::kFloat:
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, t.line, out));
      N(*out).constant.kind = t.type == Tok::kInt ? kConstInt : kConstFloat;
      N(*out).constant.integer = t.i;
      N(*out).constant.real = t.f;
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
        N(pair).pair.key = item;
        N(pair).pair.value = value;
        item = pair;
      }
      if (last < 0) {
        N(*out).seq.first = item;
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
      N(attr).get_attr.object = *node;
      N(attr).get_attr.id = AttrIdOf(TokText(Cur()).data(), TokText(Cur()).size());
      OCTET_RETURN_IF_ERROR(Intern(TokText(Cur()), &N(attr).get_attr.attr));
      Advance();
      *node = attr;
      return Status::Ok();
    }
    if (Cur().type == Tok::kInt) {
      int32_t key = -1, item = -1;
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConst, line, &key));
      N(key).constant.kind = kConstInt;
      N(key).constant.integer = Cur().i;
      Advance();
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kGetItem, line, &item));
      N(item).get_item.object = *node;
      N(item).get_item.key = key;
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
    N(sub).get_item.object = *node;
    N(sub).get_item.key = parts[0];
  } else {
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kSlice, line, &sub));
    N(sub).slice.object = *node;
    N(sub).slice.start = parts[0];
    N(sub).slice.stop = parts[1];
    N(sub).slice.step = parts[2];
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
      OCTET_RETURN_IF_ERROR(Intern(TokText(Cur()), &N(arg).arg.keyword));
      Advance();
      Advance();
      seen_keyword = true;
    } else if (seen_keyword) {
      return Syntax("a positional argument after a keyword argument");
    }
    int32_t value = -1;
    OCTET_RETURN_IF_ERROR(ParseExpression(true, &value));
    N(arg).arg.value = value;
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
    if (!IsCallableMethod(callee.get_attr.id)) {
      const PoolStr attr = callee.get_attr.attr;
      return Unsupported("the method", std::string_view(pool_.data() + attr.offset, attr.size));
    }
  } else if (callee.kind == NodeKind::kName) {
    const std::string_view name(pool_.data() + callee.name.name.offset, callee.name.name.size);
    if (name == "lipsum" || name == "cycler" || name == "joiner" || name == "super" ||
        name == "caller" || name == "self" || name == "varargs" || name == "kwargs") {
      return Unsupported("the function", name);
    }
  }
  int32_t args = -1, call = -1;
  OCTET_RETURN_IF_ERROR(ParseCallArgs(&args));
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kCall, line, &call));
  N(call).call.callee = *node;
  N(call).call.first_arg = args;
  *node = call;
  return Status::Ok();
}

Status ChatTemplateParser::ParseFilter(int32_t* node) {
  CT_DEPTH_GUARD();
  const int32_t line = Cur().line;
  Advance();  // '|'
  if (Cur().type != Tok::kName) return Syntax("expected a filter name after '|'");
  const std::string_view name = TokText(Cur());
  FilterId id;
  if (!FindFilter(name.data(), name.size(), &id)) return Unsupported("the filter", name);
  Advance();
  if (IsOp(".")) return Unsupported("a dotted filter name");
  int32_t args = -1, filter = -1;
  if (IsOp("(")) OCTET_RETURN_IF_ERROR(ParseCallArgs(&args));
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kFilter, line, &filter));
  N(filter).filter.id = id;
  N(filter).filter.value = *node;
  N(filter).filter.first_arg = args;
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
  TestId id;
  if (!FindTest(name.data(), name.size(), &id)) return Unsupported("the test", name);
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
    N(args).arg.value = value;
  }
  int32_t test = -1;
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kTest, line, &test));
  N(test).test.id = id;
  N(test).test.value = *node;
  N(test).test.first_arg = args;
  N(test).test.negated = negated;
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
    const ChatTemplateNode empty(NodeKind::kText);
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
  Free(nodes_);
  Free(strings_);
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
