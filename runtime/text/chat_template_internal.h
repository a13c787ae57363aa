// The chat template's node tree, shared by the parser and the renderer: typed
// nodes in one array that refer to each other by index (-1 = none), and the
// ids every name of a filter, test, method, attribute, global or operator is
// resolved to at parse time. Names and decoded string literals are slices of
// one pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/utf8.h"

namespace octet::text {

enum class NodeKind : uint8_t {
  // Statements
  kText, kOutput, kIf, kFor, kSet, kSetBlock, kMacro, kBreak, kContinue,
  kScope,  // HF's {% generation %}: renders its body as is
  // Expressions
  kConst, kName, kList, kTuple, kDict, kPair, kGetAttr, kGetItem, kSlice, kCall, kArg, kParam,
  kFilter, kTest, kUnary, kBinary, kCompare, kCompareOp, kAnd, kOr, kCond,
};

enum ConstKind : uint8_t { kConstNone, kConstBool, kConstInt, kConstFloat, kConstString };

enum UnaryOp : uint8_t { kUnaryNot, kUnaryMinus, kUnaryPlus };

enum BinaryOp : uint8_t {
  kOpAdd, kOpSub, kOpMul, kOpDiv, kOpFloorDiv, kOpMod, kOpPow, kOpConcat,
};

enum CompareOp : uint8_t { kCmpEq, kCmpNe, kCmpLt, kCmpLe, kCmpGt, kCmpGe, kCmpIn, kCmpNotIn };

enum FilterId : uint16_t {
  kFilterAbs, kFilterCapitalize, kFilterCount, kFilterDefault, kFilterFirst,
  kFilterFloat, kFilterIndent, kFilterInt, kFilterItems, kFilterJoin, kFilterLast, kFilterLength,
  kFilterList, kFilterLower, kFilterMap, kFilterRejectattr, kFilterReplace, kFilterReverse,
  kFilterSafe, kFilterSelectattr, kFilterString, kFilterTitle, kFilterTojson, kFilterTrim,
  kFilterUpper,
};

enum TestId : uint16_t {
  kTestBoolean, kTestDefined, kTestDivisibleby, kTestEq, kTestEven, kTestFalse, kTestFloat,
  kTestGe, kTestGt, kTestIn, kTestInteger, kTestIterable, kTestLe, kTestLower, kTestLt,
  kTestMapping, kTestNe, kTestNone, kTestNumber, kTestOdd, kTestSameas, kTestSequence,
  kTestString, kTestTrue, kTestUndefined, kTestUpper,
};

// Attribute names with a meaning of their own: the loop object's attributes
// and the methods of strings and dicts. Resolved at parse time for `x.name`
// (AttrIdOf at render time for a key that is a value, `x['name']`).
enum class AttrId : uint8_t {
  kOther,
  // loop.*
  kIndex, kIndex0, kRevindex, kRevindex0, kFirst, kLast, kLength, kDepth, kDepth0, kPrevitem,
  kNextitem,
  // The methods a template may call: on strings (kStrip..kCapitalize) and on
  // dicts (kItems..kGet).
  kStrip, kLstrip, kRstrip, kSplit, kStartswith, kEndswith, kUpper, kLower, kReplace, kTitle,
  kCapitalize, kItems, kKeys, kValues, kGet,
  // Dict methods a template may read but not call.
  kPop, kUpdate, kCopy, kClear, kSetdefault, kPopitem, kFromkeys,
};

// The names a template reads from the render's globals (kUser: any other
// name, looked up among the caller's variables only). Resolved at parse time.
enum class GlobalId : uint8_t {
  kUser, kMessages, kAddGenerationPrompt, kBosToken, kEosToken, kTools, kDocuments,
  kRange, kNamespace, kDict, kRaiseException, kStrftimeNow,
};

// Jinja names of the filters and tests above, in enum order; several names
// may map to one id (aliases such as `d` and `equalto`).
struct NamedId {
  const char* name;
  uint16_t id;
};
extern const NamedId kFilterNames[];
extern const size_t kNumFilterNames;
extern const NamedId kTestNames[];
extern const size_t kNumTestNames;
const char* FilterName(uint16_t id);
const char* TestName(uint16_t id);
// The id of a filter or test name; false for a name outside the subset.
bool FindFilter(const char* name, size_t len, FilterId* id);
bool FindTest(const char* name, size_t len, TestId* id);
AttrId AttrIdOf(const char* name, size_t len);
GlobalId GlobalIdOf(const char* name, size_t len);

// A method that a template may call (any other `.name(...)` is refused at
// parse time).
inline bool IsCallableMethod(AttrId id) { return id >= AttrId::kStrip && id <= AttrId::kGet; }
inline bool IsDictMethod(AttrId id) { return id >= AttrId::kItems; }

// A slice of the template's string pool (names and decoded literals).
struct PoolStr {
  uint32_t offset = 0, size = 0;
};

// The payload of each node kind. Fields that name nodes are indices into the
// node array, -1 for none; lists (statements of a body, call arguments, list
// items, dict pairs, macro parameters, comparison operators) chain through
// ChatTemplateNode::next.
struct TextStmt {
  PoolStr text;
};
struct OutputStmt {
  int32_t expr = -1;
};
struct IfStmt {
  int32_t cond = -1, body = -1;
  int32_t else_body = -1;  // an elif is a single kIf statement here
};
struct ForStmt {
  int32_t target = -1;  // a kName or a kTuple of kName
  int32_t iterable = -1, body = -1, else_body = -1;
  int32_t filter = -1;  // the loop's `if` condition
};
struct SetStmt {
  int32_t target = -1;  // a kName, a kTuple of kName, or a kGetAttr of a kName
  int32_t value = -1;
};
struct SetBlockStmt {
  int32_t target = -1, body = -1;  // target: a kName
};
struct MacroStmt {
  PoolStr name;
  int32_t first_param = -1, body = -1;
};
struct ScopeStmt {
  int32_t body = -1;
};
struct ConstExpr {
  ConstKind kind = kConstNone;
  int64_t integer = 0;  // kConstBool (0 or 1), kConstInt
  double real = 0.0;    // kConstFloat
  PoolStr string;       // kConstString
};
struct NameExpr {
  PoolStr name;
  GlobalId global = GlobalId::kUser;
};
struct SeqExpr {
  int32_t first = -1;  // kList, kTuple: the first item; kDict: the first kPair
};
struct PairExpr {
  int32_t key = -1, value = -1;
};
struct GetAttrExpr {
  int32_t object = -1;
  PoolStr attr;
  AttrId id = AttrId::kOther;
};
struct GetItemExpr {
  int32_t object = -1, key = -1;
};
struct SliceExpr {
  int32_t object = -1, start = -1, stop = -1, step = -1;
};
struct CallExpr {
  int32_t callee = -1, first_arg = -1;
};
struct ArgExpr {
  int32_t value = -1;
  PoolStr keyword;  // empty for a positional argument
};
struct ParamDecl {
  PoolStr name;
  int32_t default_value = -1;
};
struct FilterExpr {
  FilterId id = kFilterSafe;
  int32_t value = -1, first_arg = -1;
};
struct TestExpr {
  TestId id = kTestDefined;
  bool negated = false;
  int32_t value = -1, first_arg = -1;
};
struct UnaryExpr {
  UnaryOp op = kUnaryNot;
  int32_t operand = -1;
};
struct BinaryExpr {
  BinaryOp op = kOpAdd;
  int32_t left = -1, right = -1;
};
struct LogicalExpr {  // kAnd, kOr
  int32_t left = -1, right = -1;
};
struct CompareExpr {
  int32_t first = -1;     // the first operand
  int32_t first_op = -1;  // the first kCompareOp
};
struct CompareOpExpr {
  CompareOp op = kCmpEq;
  int32_t operand = -1;
};
struct CondExpr {
  int32_t value = -1, cond = -1, else_value = -1;
};

// One node: its kind, and the payload of that kind (the union member named
// after it). Trivially copyable: the parser grows the node array with memcpy.
struct ChatTemplateNode {
  explicit ChatTemplateNode(NodeKind k = NodeKind::kText) : kind(k), text() { InitPayload(); }

  NodeKind kind;
  int32_t line = 0;
  int32_t next = -1;
  union {
    TextStmt text;
    OutputStmt output;
    IfStmt if_stmt;
    ForStmt for_stmt;
    SetStmt set;
    SetBlockStmt set_block;
    MacroStmt macro;
    ScopeStmt scope;
    ConstExpr constant;
    NameExpr name;
    SeqExpr seq;
    PairExpr pair;
    GetAttrExpr get_attr;
    GetItemExpr get_item;
    SliceExpr slice;
    CallExpr call;
    ArgExpr arg;
    ParamDecl param;
    FilterExpr filter;
    TestExpr test;
    UnaryExpr unary;
    BinaryExpr binary;
    LogicalExpr logical;
    CompareExpr compare;
    CompareOpExpr compare_op;
    CondExpr cond;
  };

 private:
  // Makes the member for `kind` the union's active one, with its defaults.
  void InitPayload() {
    switch (kind) {
      case NodeKind::kText: text = TextStmt(); break;
      case NodeKind::kOutput: output = OutputStmt(); break;
      case NodeKind::kIf: if_stmt = IfStmt(); break;
      case NodeKind::kFor: for_stmt = ForStmt(); break;
      case NodeKind::kSet: set = SetStmt(); break;
      case NodeKind::kSetBlock: set_block = SetBlockStmt(); break;
      case NodeKind::kMacro: macro = MacroStmt(); break;
      case NodeKind::kBreak:
      case NodeKind::kContinue: break;
      case NodeKind::kScope: scope = ScopeStmt(); break;
      case NodeKind::kConst: constant = ConstExpr(); break;
      case NodeKind::kName: name = NameExpr(); break;
      case NodeKind::kList:
      case NodeKind::kTuple:
      case NodeKind::kDict: seq = SeqExpr(); break;
      case NodeKind::kPair: pair = PairExpr(); break;
      case NodeKind::kGetAttr: get_attr = GetAttrExpr(); break;
      case NodeKind::kGetItem: get_item = GetItemExpr(); break;
      case NodeKind::kSlice: slice = SliceExpr(); break;
      case NodeKind::kCall: call = CallExpr(); break;
      case NodeKind::kArg: arg = ArgExpr(); break;
      case NodeKind::kParam: param = ParamDecl(); break;
      case NodeKind::kFilter: filter = FilterExpr(); break;
      case NodeKind::kTest: test = TestExpr(); break;
      case NodeKind::kUnary: unary = UnaryExpr(); break;
      case NodeKind::kBinary: binary = BinaryExpr(); break;
      case NodeKind::kAnd:
      case NodeKind::kOr: logical = LogicalExpr(); break;
      case NodeKind::kCompare: compare = CompareExpr(); break;
      case NodeKind::kCompareOp: compare_op = CompareOpExpr(); break;
      case NodeKind::kCond: cond = CondExpr(); break;
    }
  }
};
static_assert(std::is_trivially_copyable_v<ChatTemplateNode>, "the parser copies the node array with memcpy");

// Python's str.isspace() for one code point.
inline bool IsPythonSpace(uint32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F)) return true;
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// Decodes one code point of s[0, n) at *i (advancing *i); invalid bytes decode
// as themselves (one byte each) so that nothing reads out of bounds.
inline uint32_t DecodeLenient(const char* s, size_t n, size_t* i) {
  const Utf8Char c = Utf8DecodeAt(s, n, *i, Utf8Form::kLenient);
  if (!c.valid) {
    const uint32_t b0 = static_cast<uint8_t>(s[*i]);
    *i += 1;
    return b0 | 0x80000000u;  // marks a raw byte
  }
  *i += c.length;
  return c.code_point;
}

// Start of the code point that ends at s[end) (end > 0): steps back over
// continuation bytes, at most 3.
inline size_t PrevCodePointStart(const char* s, size_t end) {
  size_t k = end - 1;
  size_t steps = 0;
  while (k > 0 && steps < 3 && Utf8IsContinuation(static_cast<uint8_t>(s[k]))) {
    --k;
    ++steps;
  }
  size_t probe = k;
  DecodeLenient(s, end, &probe);
  return probe == end ? k : end - 1;
}

}  // namespace octet::text
