// Overflow-checked size arithmetic for everything that comes from a file or a
// caller: a model may claim any dimension, and a product that wraps must be an
// error, not a small buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet {

inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
// Rounds `value` up to a multiple of `alignment` (a power of two).
inline bool CheckedAlignUp(uint64_t value, uint64_t alignment, uint64_t* out) {
  uint64_t sum;
  if (!CheckedAdd(value, alignment - 1, &sum)) return false;
  *out = sum & ~(alignment - 1);
  return true;
}
constexpr size_t AlignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}
// True when [offset, offset + size) lies inside [0, limit).
inline bool RangeInside(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace octet
