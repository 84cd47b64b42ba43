#pragma once

// lp::tensor<T>: an n-dimensional array of numbers in row-major order, for
// parameters, observations and batches. It travels as
//   {"shape": [d0, d1, ...], "data": <the values>}
// where the values are an RFC 8746 typed array in CBOR (one memcpy, however
// large) and an array of numbers in JSON (so curl still reads it).
//
//   lp::tensor<float> weights({2, 3});       // zeros
//   weights(1, 2) = 0.5f;
//   float* raw = weights.data();             // 6 contiguous floats
//
// A std::vector<float> (or of any other number type) travels as a typed
// array too; a tensor adds the shape.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <utility>
#include <vector>

namespace lp {

template <class T>
class tensor {
  static_assert(detail::packable<T>,
                "lp::tensor<T>: T must be a number type other than bool (float, double, "
                "std::int32_t, ...)");

 public:
  using value_type = T;
  using shape_type = std::vector<std::size_t>;

  tensor() = default;

  // A tensor of this shape, every value zero.
  explicit tensor(shape_type shape) : shape_(std::move(shape)), values_(count(shape_)) {}

  // A tensor of this shape holding `values` (row-major); throws
  // lp::usage_error if their number is not the product of the shape.
  tensor(shape_type shape, std::vector<T> values)
      : shape_(std::move(shape)), values_(std::move(values)) {
    if (values_.size() != count(shape_))
      throw usage_error("lp::tensor: a shape of " + shape_text(shape_) + " holds " +
                        std::to_string(count(shape_)) + " values, not " +
                        std::to_string(values_.size()));
  }

  const shape_type& shape() const noexcept { return shape_; }
  std::size_t rank() const noexcept { return shape_.size(); }
  std::size_t size() const noexcept { return values_.size(); }

  T* data() noexcept { return values_.data(); }
  const T* data() const noexcept { return values_.data(); }

  // The values in row-major order.
  std::vector<T>& values() noexcept { return values_; }
  const std::vector<T>& values() const noexcept { return values_; }

  T& operator[](std::size_t flat) { return values_[flat]; }
  const T& operator[](std::size_t flat) const { return values_[flat]; }

  // The value at one index per dimension, unchecked like operator[].
  template <class... Index>
  T& operator()(Index... index) {
    return values_[offset({static_cast<std::size_t>(index)...})];
  }
  template <class... Index>
  const T& operator()(Index... index) const {
    return values_[offset({static_cast<std::size_t>(index)...})];
  }

  bool operator==(const tensor&) const = default;

 private:
  static std::size_t count(const shape_type& shape) { return detail::shape_count(shape); }
  static std::string shape_text(const shape_type& shape) {
    return detail::shape_text(shape);
  }

  std::size_t offset(std::initializer_list<std::size_t> index) const {
    std::size_t flat = 0, dimension = 0;
    for (auto i : index) flat = flat * shape_[dimension++] + i;
    return flat;
  }

  shape_type shape_;
  std::vector<T> values_;
};

}  // namespace lp
