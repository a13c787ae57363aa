// Values of a chat template render and the scratch arena they live in.
// Everything a render creates (strings, lists, dicts, namespaces, bindings)
// is bump-allocated from the caller's scratch; nothing is freed before the
// render ends, and nothing touches the heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace octet::text {

class ScratchArena {
 public:
  ScratchArena(void* base, size_t size) : base_(static_cast<uint8_t*>(base)), size_(size) {}

  // nullptr when the arena is exhausted (the caller turns that into a status).
  void* Alloc(size_t bytes, size_t align = 8) {
    const uintptr_t start = reinterpret_cast<uintptr_t>(base_) + used_;
    const size_t pad = (align - (start & (align - 1))) & (align - 1);
    if (base_ == nullptr || bytes > size_ || pad > size_ - used_ ||
        bytes > size_ - used_ - pad) {
      return nullptr;
    }
    void* p = base_ + used_ + pad;
    used_ += pad + bytes;
    return p;
  }
  template <typename T>
  T* AllocArray(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) return nullptr;
    return static_cast<T*>(Alloc(n * sizeof(T) + (n == 0 ? 1 : 0), alignof(T)));
  }
  // The free bytes at the top, for a string built in place (see TopWriter).
  char* top() const { return reinterpret_cast<char*>(base_ + used_); }
  size_t free_bytes() const { return size_ - used_; }
  void Commit(size_t bytes) { used_ += bytes; }
  // Frees everything allocated after `used` (a mark taken earlier).
  void Reset(size_t used) {
    if (used < used_) used_ = used;
  }
  size_t used() const { return used_; }
  size_t size() const { return size_; }

 private:
  uint8_t* base_;
  size_t size_;
  size_t used_ = 0;
};

enum class VKind : uint8_t {
  kUndefined,  // s/n: the missing name, for messages
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,       // list or tuple (ListObj::tuple)
  kDict,
  kNamespace,
  kMacro,      // node: the kMacro node
  kLoop,
  kMethod,     // a bound method that was read but not called
  kBuiltin,    // i: BuiltinId
};

enum BuiltinId : int64_t { kBuiltinRange, kBuiltinNamespace, kBuiltinDict, kBuiltinRaise, kBuiltinStrftime };

struct Value;

struct ListObj {
  Value* items;
  size_t size;
  bool tuple;
  uint8_t view;  // 0: a list; 1, 2, 3: dict.keys(), values(), items() (printed as such)
};

struct DictObj {
  Value* keys;
  Value* values;
  size_t size;
};

struct NsEntry {
  const char* name;
  size_t len;
  NsEntry* next;
  Value* value;
};

struct NsObj {
  NsEntry* head;
};

struct LoopObj {
  const Value* items;
  size_t length;
  size_t index0;
};

struct Value {
  VKind kind = VKind::kUndefined;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  const char* s = "";
  size_t n = 0;
  union {
    ListObj* list;
    DictObj* dict;
    NsObj* ns;
    LoopObj* loop;
    int32_t node;
  };
  Value() : list(nullptr) {}

  static Value Undefined(const char* name = "", size_t len = 0) {
    Value v;
    v.s = name;
    v.n = len;
    return v;
  }
  static Value None() {
    Value v;
    v.kind = VKind::kNone;
    return v;
  }
  static Value Bool(bool b) {
    Value v;
    v.kind = VKind::kBool;
    v.b = b;
    return v;
  }
  static Value Int(int64_t i) {
    Value v;
    v.kind = VKind::kInt;
    v.i = i;
    return v;
  }
  static Value Float(double f) {
    Value v;
    v.kind = VKind::kFloat;
    v.f = f;
    return v;
  }
  static Value Str(const char* s, size_t n) {
    Value v;
    v.kind = VKind::kString;
    v.s = s;
    v.n = n;
    return v;
  }
  static Value Str(const char* s) { return Str(s, std::strlen(s)); }

  bool is_undefined() const { return kind == VKind::kUndefined; }
  bool is_string() const { return kind == VKind::kString; }
  bool is_number() const {
    return kind == VKind::kInt || kind == VKind::kFloat || kind == VKind::kBool;
  }
  bool is_sequence() const { return kind == VKind::kList; }
  bool StrEquals(const char* text) const {
    const size_t len = std::strlen(text);
    return kind == VKind::kString && n == len && std::memcmp(s, text, len) == 0;
  }
};

}  // namespace octet::text
