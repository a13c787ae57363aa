// The CLI's JSON reader (JsonValue::Parse): what Serialize() writes reads back
// into the same tree and the same text (octet inspect prints the C API's
// description that way), escapes and surrogate pairs decode, and malformed
// text is a Failure naming the byte.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "cli/args.h"
#include "cli/json.h"

namespace octet {
namespace cli {
namespace {

TEST_CASE("Serialize text reads back to the same text") {
  JsonValue doc = JsonValue::Object();
  doc.Set("uint", uint64_t{18446744073709551615u});
  doc.Set("int", int64_t{-9223372036854775807 - 1});
  doc.Set("float", 1e-05f);
  doc.Set("float2", 0.1f);
  doc.Set("float3", 3.4e38f);
  doc.Set("float4", 10000.0f);
  doc.Set("negative_zero", -0.0f);
  doc.Set("double", 0.1);
  doc.Set("big", 1e300);
  doc.Set("nan", JsonValue(static_cast<float>(NAN)));
  doc.Set("true", true);
  doc.Set("null", JsonValue());
  doc.Set("text", std::string("tab\there \"quoted\" \\ \x01 caf\xc3\xa9 \xf0\x9f\x98\x80 \x7f"));
  JsonValue shape = JsonValue::Array();
  shape.Append(32u);
  shape.Append(16u);
  doc.Set("shape", std::move(shape));
  JsonValue rows = JsonValue::Array();
  JsonValue row = JsonValue::Object();
  row.Set("name", "a");
  row.Set("empty", JsonValue::Array());
  row.Set("none", JsonValue::Object());
  rows.Append(std::move(row));
  doc.Set("rows", std::move(rows));

  for (int indent : {0, 2}) {
    const std::string text = doc.Serialize(indent);
    const JsonValue parsed = JsonValue::Parse(text);
    CHECK(parsed.Serialize(indent) == text);
  }
  const JsonValue parsed = JsonValue::Parse(doc.Serialize());
  CHECK(parsed.Find("uint")->kind() == JsonValue::Kind::kUint);
  CHECK(parsed.Find("uint")->AsUint() == 18446744073709551615u);
  CHECK(parsed.Find("int")->kind() == JsonValue::Kind::kInt);
  CHECK(parsed.Find("int")->ToText() == "-9223372036854775808");
  CHECK(parsed.Find("float")->ToText() == "1e-05");
  CHECK(parsed.Find("float2")->ToText() == "0.1");
  CHECK(parsed.Find("float4")->ToText() == "10000");
  CHECK(parsed.Find("negative_zero")->ToText() == "-0");
  CHECK(parsed.Find("nan")->is_null());
  CHECK(parsed.Find("text")->ToText() ==
        "tab\there \"quoted\" \\ \x01 caf\xc3\xa9 \xf0\x9f\x98\x80 \x7f");
}

TEST_CASE("invalid UTF-8, written as \\ufffd, reads back as U+FFFD") {
  JsonValue doc = JsonValue::Object();
  doc.Set("name", std::string("bad \xff\xc3 end"));
  const std::string text = doc.Serialize(0);
  CHECK(text == "{\"name\":\"bad \\ufffd\\ufffd end\"}");
  const JsonValue parsed = JsonValue::Parse(text);
  CHECK(parsed.Find("name")->ToText() == "bad \xef\xbf\xbd\xef\xbf\xbd end");
  // Written again, the replacement characters are plain UTF-8: the same string.
  CHECK(parsed.Serialize(0) == "{\"name\":\"bad \xef\xbf\xbd\xef\xbf\xbd end\"}");
}

TEST_CASE("escapes, surrogates, whitespace and repeated keys") {
  const JsonValue v = JsonValue::Parse(
      " {\"s\": \"\\u00e9\\/\\ud83d\\ude00\\ud800x\\b\\f\\n\\r\\t\", \"k\": 1, \"k\": [true, "
      "false, null, -1.5e2, 0]}\r\n");
  CHECK(v.Find("s")->ToText() == "\xc3\xa9/\xf0\x9f\x98\x80\xef\xbf\xbdx\b\f\n\r\t");
  REQUIRE(v.members().size() == 2);  // "k" once, in its first place, with its last value
  CHECK(v.members()[1].first == "k");
  CHECK(v.Find("k")->Serialize(0) == "[true,false,null,-150,0]");
}

TEST_CASE("malformed text is a Failure naming the byte") {
  for (const char* bad :
       {"",        " ",         "{",        "}",   "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":}",
        "{a:1}",   "01",        "1.",       "-",   "1e",   ".5",    "+1",        "\"abc",
        "\"\\x\"", "\"\\u12\"", "\"a\nb\"", "tru", "nul",  "{} {}", "[[[[",      "\"\\"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(JsonValue::Parse(bad), Failure);
  }
  try {
    JsonValue::Parse("[1, 2, x]");
    FAIL("no Failure");
  } catch (const Failure& e) {
    CHECK(std::string(e.what()) == "invalid JSON at byte 7: expected a value");
  }
  // Deep nesting stops at a bound instead of the stack's end.
  CHECK_THROWS_AS(JsonValue::Parse(std::string(100000, '[')), Failure);
}

}  // namespace
}  // namespace cli
}  // namespace octet
