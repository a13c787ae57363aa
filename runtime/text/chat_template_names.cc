// The names a chat template may use, and the ids the parser resolves them to:
// filters, tests, attributes and methods, and the render's globals.
#include <cstddef>
#include <cstring>

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

namespace {

struct NamedAttr {
  const char* name;
  AttrId id;
};
const NamedAttr kAttrNames[] = {
    {"index", AttrId::kIndex},         {"index0", AttrId::kIndex0},
    {"revindex", AttrId::kRevindex},   {"revindex0", AttrId::kRevindex0},
    {"first", AttrId::kFirst},         {"last", AttrId::kLast},
    {"length", AttrId::kLength},       {"depth", AttrId::kDepth},
    {"depth0", AttrId::kDepth0},       {"previtem", AttrId::kPrevitem},
    {"nextitem", AttrId::kNextitem},   {"strip", AttrId::kStrip},
    {"lstrip", AttrId::kLstrip},       {"rstrip", AttrId::kRstrip},
    {"split", AttrId::kSplit},         {"startswith", AttrId::kStartswith},
    {"endswith", AttrId::kEndswith},   {"upper", AttrId::kUpper},
    {"lower", AttrId::kLower},         {"replace", AttrId::kReplace},
    {"title", AttrId::kTitle},         {"capitalize", AttrId::kCapitalize},
    {"items", AttrId::kItems},         {"keys", AttrId::kKeys},
    {"values", AttrId::kValues},       {"get", AttrId::kGet},
    {"pop", AttrId::kPop},             {"update", AttrId::kUpdate},
    {"copy", AttrId::kCopy},           {"clear", AttrId::kClear},
    {"setdefault", AttrId::kSetdefault}, {"popitem", AttrId::kPopitem},
    {"fromkeys", AttrId::kFromkeys},
};

struct NamedGlobal {
  const char* name;
  GlobalId id;
};
const NamedGlobal kGlobalNames[] = {
    {"messages", GlobalId::kMessages},   {"add_generation_prompt", GlobalId::kAddGenerationPrompt},
    {"bos_token", GlobalId::kBosToken},  {"eos_token", GlobalId::kEosToken},
    {"tools", GlobalId::kTools},         {"documents", GlobalId::kDocuments},
    {"range", GlobalId::kRange},         {"namespace", GlobalId::kNamespace},
    {"dict", GlobalId::kDict},           {"raise_exception", GlobalId::kRaiseException},
    {"strftime_now", GlobalId::kStrftimeNow},
};

bool NameEquals(const char* name, size_t len, const char* text) {
  return std::strlen(text) == len && std::memcmp(name, text, len) == 0;
}

}  // namespace

bool FindFilter(const char* name, size_t len, FilterId* id) {
  for (size_t k = 0; k < kNumFilterNames; ++k) {
    if (NameEquals(name, len, kFilterNames[k].name)) {
      *id = static_cast<FilterId>(kFilterNames[k].id);
      return true;
    }
  }
  return false;
}

bool FindTest(const char* name, size_t len, TestId* id) {
  for (size_t k = 0; k < kNumTestNames; ++k) {
    if (NameEquals(name, len, kTestNames[k].name)) {
      *id = static_cast<TestId>(kTestNames[k].id);
      return true;
    }
  }
  return false;
}

AttrId AttrIdOf(const char* name, size_t len) {
  for (const NamedAttr& attr : kAttrNames) {
    if (NameEquals(name, len, attr.name)) return attr.id;
  }
  return AttrId::kOther;
}

GlobalId GlobalIdOf(const char* name, size_t len) {
  for (const NamedGlobal& global : kGlobalNames) {
    if (NameEquals(name, len, global.name)) return global.id;
  }
  return GlobalId::kUser;
}

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

}  // namespace octet::text
