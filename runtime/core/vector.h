// Vector<T>: the runtime's growable array. Like std::vector, without
// exceptions: every call that may grow returns false when the allocation
// (core/alloc.h) fails, leaving the contents as they were, and the caller
// turns that into a kOutOfMemory Status. Elements move (never copy) when the
// storage grows; the vector itself is move-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "core/alloc.h"

namespace octet {

template <typename T>
class Vector {
 public:
  Vector() = default;
  ~Vector() {
    Clear();
    Free(data_);
  }
  Vector(Vector&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  Vector& operator=(Vector&& other) noexcept {
    if (this != &other) {
      Clear();
      Free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  Vector(const Vector&) = delete;
  Vector& operator=(const Vector&) = delete;

  // Room for n elements without another allocation.
  [[nodiscard]] bool Reserve(size_t n) {
    if (n <= capacity_) return true;
    if (n > SIZE_MAX / sizeof(T)) return false;
    T* grown = static_cast<T*>(Allocate(n * sizeof(T), alignof(T)));
    if (grown == nullptr) return false;
    for (size_t i = 0; i < size_; ++i) {
      new (grown + i) T(std::move(data_[i]));
      data_[i].~T();
    }
    Free(data_);
    data_ = grown;
    capacity_ = n;
    return true;
  }
  // n elements: new ones are copies of `value`, extra ones are destroyed.
  [[nodiscard]] bool Resize(size_t n, const T& value = T()) {
    if (n > capacity_ && !Reserve(n)) return false;
    while (size_ > n) data_[--size_].~T();
    while (size_ < n) new (data_ + size_++) T(value);
    return true;
  }
  // Exactly n copies of `value`.
  [[nodiscard]] bool Assign(size_t n, const T& value) {
    Clear();
    return Resize(n, value);
  }
  [[nodiscard]] bool Push(const T& value) {
    if (size_ == capacity_ && !Grow(size_ + 1)) return false;
    new (data_ + size_++) T(value);
    return true;
  }
  [[nodiscard]] bool Push(T&& value) {
    if (size_ == capacity_ && !Grow(size_ + 1)) return false;
    new (data_ + size_++) T(std::move(value));
    return true;
  }
  // Appends copies of values[0, n) (which must not point into this vector).
  [[nodiscard]] bool Append(const T* values, size_t n) {
    if (size_ + n > capacity_ && !Grow(size_ + n)) return false;
    for (size_t i = 0; i < n; ++i) new (data_ + size_++) T(values[i]);
    return true;
  }
  void PopBack() { data_[--size_].~T(); }
  void Clear() {
    while (size_ > 0) data_[--size_].~T();
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  // At least `need` slots, doubling.
  bool Grow(size_t need) {
    size_t n = capacity_ < 8 ? 8 : capacity_;
    while (n < need) {
      if (n > SIZE_MAX / 2) return Reserve(need);
      n *= 2;
    }
    return Reserve(n);
  }

  T* data_ = nullptr;  // [capacity_], the first size_ constructed
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace octet
