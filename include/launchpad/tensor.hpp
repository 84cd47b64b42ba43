#pragma once

/// @file
/// lp::tensor, an n-dimensional array of numbers for the wire.

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

/// An n-dimensional array of numbers in row-major order, for parameters,
/// observations and batches.
///
/// ```cpp
/// lp::tensor<float> weights({2, 3});  // zeros
/// weights(1, 2) = 0.5f;
/// float* raw = weights.data();        // 6 contiguous floats
/// ```
///
/// It travels as `{"shape": [d0, d1, ...], "data": <the values>}`, where the
/// values are an RFC 8746 typed array in CBOR (one memcpy, however large)
/// and an array of numbers in JSON, so that curl still reads it
/// (docs/protocol.md, "Numbers in bulk"). A `std::vector<float>`, or of any
/// other number type, travels as a typed array too; a tensor adds the shape.
/// A Python node sees a numpy array.
///
/// @tparam T a number type other than bool: float, double, std::int32_t, ...
template <class T>
class tensor {
  static_assert(detail::packable<T>,
                "lp::tensor<T>: T must be a number type other than bool (float, double, "
                "std::int32_t, ...)");

 public:
  /// The type of each value.
  using value_type = T;
  /// The extent of each dimension, outermost first.
  using shape_type = std::vector<std::size_t>;

  /// An empty tensor: no shape, no values.
  tensor() = default;

  /// A tensor of this shape, every value zero.
  explicit tensor(shape_type shape) : shape_(std::move(shape)), values_(count(shape_)) {}

  /// A tensor of this shape holding `values`, in row-major order.
  /// @throws lp::usage_error if their number is not the product of the shape
  tensor(shape_type shape, std::vector<T> values)
      : shape_(std::move(shape)), values_(std::move(values)) {
    if (values_.size() != count(shape_))
      throw usage_error("lp::tensor: a shape of " + shape_text(shape_) + " holds " +
                        std::to_string(count(shape_)) + " values, not " +
                        std::to_string(values_.size()));
  }

  /// The extent of each dimension, outermost first.
  const shape_type& shape() const noexcept { return shape_; }
  /// The number of dimensions.
  std::size_t rank() const noexcept { return shape_.size(); }
  /// The number of values: the product of the shape.
  std::size_t size() const noexcept { return values_.size(); }

  /// The values, contiguous in row-major order.
  T* data() noexcept { return values_.data(); }
  /// The values, contiguous in row-major order.
  const T* data() const noexcept { return values_.data(); }

  /// The values in row-major order. Keep their number: the shape does not
  /// follow it.
  std::vector<T>& values() noexcept { return values_; }
  /// The values in row-major order.
  const std::vector<T>& values() const noexcept { return values_; }

  /// The value at this place in the row-major order; unchecked.
  T& operator[](std::size_t flat) { return values_[flat]; }
  /// The value at this place in the row-major order; unchecked.
  const T& operator[](std::size_t flat) const { return values_[flat]; }

  /// The value at one index per dimension, unchecked like operator[]:
  /// `t(i, j)` of a matrix.
  template <class... Index>
  T& operator()(Index... index) {
    return values_[offset({static_cast<std::size_t>(index)...})];
  }
  /// The value at one index per dimension, unchecked like operator[].
  template <class... Index>
  const T& operator()(Index... index) const {
    return values_[offset({static_cast<std::size_t>(index)...})];
  }

  /// Equal shapes and equal values.
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
