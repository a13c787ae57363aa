// The chat template's node tree, shared by the parser and the renderer.
// Nodes live in one array and refer to each other by index (-1 = none);
// lists (statements of a body, call arguments, list items) are chained
// through `next`. Names and decoded string literals are slices of one pool.
#pragma once

#include <cstddef>
#include <cstdint>

#include "text/utf8.h"

namespace octet::text {

enum class NodeKind : uint8_t {
  // Statements
  kText,       // str: literal output
  kOutput,     // a: expression
  kIf,         // a: condition, b: body, c: else body (an elif is an kIf there)
  kFor,        // a: target (kName or kTuple of kName), b: iterable, c: body,
               // d: else body, e: filter condition
  kSet,        // a: target (kName, kTuple of kName, or kGetAttr of a kName), b: value
  kSetBlock,   // a: target kName, b: body
  kMacro,      // str: name, a: first kParam, b: body
  kBreak,
  kContinue,
  kScope,      // b: body (HF's {% generation %}: renders its body as is)
  // Expressions
  kConst,      // op: ConstKind; i / f / str
  kName,       // str
  kList,       // a: first item
  kTuple,      // a: first item
  kDict,       // a: first kPair
  kPair,       // a: key, b: value
  kGetAttr,    // a: object, str: attribute
  kGetItem,    // a: object, b: key
  kSlice,      // a: object, b: start, c: stop, d: step (each may be -1)
  kCall,       // a: callee, b: first kArg
  kArg,        // a: value, str: keyword (empty for positional)
  kParam,      // str: name, a: default value or -1
  kFilter,     // op: FilterId, a: value, b: first kArg
  kTest,       // op: TestId, a: value, b: first kArg, i: 1 when negated
  kUnary,      // op: '-', '+' or 'n' (not), a
  kBinary,     // op: BinaryOp, a, b
  kCompare,    // a: first operand, b: first kCompareOp
  kCompareOp,  // op: CompareOp, a: operand
  kAnd,        // a, b
  kOr,         // a, b
  kCond,       // a: value, b: condition, c: else value or -1
};

enum ConstKind : uint16_t { kConstNone, kConstBool, kConstInt, kConstFloat, kConstString };

enum BinaryOp : uint16_t {
  kOpAdd, kOpSub, kOpMul, kOpDiv, kOpFloorDiv, kOpMod, kOpPow, kOpConcat,
};

enum CompareOp : uint16_t { kCmpEq, kCmpNe, kCmpLt, kCmpLe, kCmpGt, kCmpGe, kCmpIn, kCmpNotIn };

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

// Methods the renderer knows (on strings, dicts and the loop object); a call
// of any other `.name(...)` is refused at parse time.
extern const char* const kMethodNames[];
extern const size_t kNumMethodNames;

struct ChatTemplateNode {
  NodeKind kind;
  uint16_t op = 0;
  int32_t line = 0;
  int32_t a = -1, b = -1, c = -1, d = -1, e = -1;
  int32_t next = -1;
  uint32_t str = 0, str_len = 0;  // slice of the string pool
  int64_t i = 0;
  double f = 0.0;
};

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
