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
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/error.hpp>
#include <launchpad/wire.hpp>
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
  tensor(shape_type shape, std::vector<T> values) : shape_(std::move(shape)), values_(std::move(values)) {
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

  friend void to_json(json& j, const tensor& t) {
    j = json::object();
    j["shape"] = t.shape_;
    j["data"] = detail::typed_array::pack(t.values_.data(), t.values_.size());
  }

  friend void from_json(const json& j, tensor& t) {
    if (!j.is_object() || !j.contains("shape") || !j.contains("data"))
      throw detail::decode_error("expected a tensor, an object with 'shape' and 'data', got " +
                                 detail::describe_value(j));
    auto shape = detail::from_wire<shape_type>(j["shape"]);
    auto values = detail::from_wire<std::vector<T>>(j["data"]);
    if (values.size() != count(shape))
      throw detail::decode_error("a tensor of shape " + shape_text(shape) + " needs " +
                                 std::to_string(count(shape)) + " values, got " +
                                 std::to_string(values.size()));
    t.shape_ = std::move(shape);
    t.values_ = std::move(values);
  }

 private:
  // The number of values of a shape; SIZE_MAX for one too large to hold.
  static std::size_t count(const shape_type& shape) {
    std::size_t total = 1;
    for (auto dimension : shape)
      if (__builtin_mul_overflow(total, dimension, &total)) return SIZE_MAX;
    return total;
  }

  static std::string shape_text(const shape_type& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
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

namespace lp::detail {
template <class T>
inline constexpr bool is_tensor = false;
template <class T>
inline constexpr bool is_tensor<tensor<T>> = true;
}  // namespace lp::detail
