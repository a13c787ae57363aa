// JsonWriter: JSON text (RFC 8259) into a caller's buffer with no allocation.
// size() counts every byte, written or not: one pass over an empty buffer
// gives the size a document needs, a second writes it.
//
// The one JSON writer of octet: octet_model_describe (runtime/api) and the
// CLI's --json output (targets/cli/json.h serializes its trees with it), so
// both print the same bytes. Layout, with indent > 0: that many spaces per
// level, one member or element per line, arrays of scalars on one line
// ("[1, 2]"); indent 0: one line, no spaces. Empty containers are {} and [].
// Strings: the two-character escapes, \u00XX for the other control characters
// and DEL, valid UTF-8 as is, \ufffd for each byte of anything else. Numbers:
// integers as they are; floats and doubles with the fewest digits that read
// back as the same value (integral values below 1e15 without an exponent), a
// '.' whatever the locale, null when not finite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace octet {

class JsonWriter {
 public:
  // Deep enough for any tree the CLI's reader accepts (256 levels).
  static constexpr size_t kMaxDepth = 260;

  JsonWriter(char* out, size_t capacity, int indent = 2)
      : out_(out), capacity_(capacity), indent_(indent) {}

  size_t size() const { return size_; }
  // False when the document was not closed or nested too deep (a bug of the caller).
  bool ok() const { return ok_ && depth_ == 0; }

  void BeginObject() { Open('{', false, false); }
  void EndObject() { Close('}'); }
  // flat: every element is a scalar (the array stays on one line).
  void BeginArray(bool flat) { Open('[', true, flat); }
  void EndArray() { Close(']'); }

  // An object's member name; its value follows (w.Key("size").Uint(n)).
  JsonWriter& Key(const char* key, size_t n);
  JsonWriter& Key(const char* key) { return Key(key, std::strlen(key)); }

  void Null() { Scalar("null"); }
  void Bool(bool value) { Scalar(value ? "true" : "false"); }
  void Uint(uint64_t value);
  void Int(int64_t value);
  void Float(float value);
  void Double(double value);
  void String(const char* text, size_t n);
  void String(const char* text) { String(text, text == nullptr ? 0 : std::strlen(text)); }

  // The text Float and Double write (NUL-terminated; "null" when not finite).
  static void FormatFloat(float value, char (&text)[32]);
  static void FormatDouble(double value, char (&text)[32]);

 private:
  struct Level {
    bool array = false;
    bool flat = false;
    uint32_t count = 0;
  };

  void Put(const char* text, size_t n);
  void Put(const char* text) { Put(text, std::strlen(text)); }
  void Put(char c) { Put(&c, 1); }
  void NewLine(size_t level);
  // Inside an array: the separator and line break before an element.
  void BeforeValue();
  void Scalar(const char* text) {
    BeforeValue();
    Put(text);
  }
  void Open(char bracket, bool array, bool flat);
  void Close(char bracket);
  void Quote(const char* text, size_t n);

  char* out_;
  size_t capacity_;
  int indent_;
  size_t size_ = 0;
  bool ok_ = true;
  Level stack_[kMaxDepth];
  size_t depth_ = 0;  // open containers
};

}  // namespace octet
