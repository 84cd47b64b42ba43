#pragma once

/// @file
/// lp::tensor, an n-dimensional array of numbers for the wire.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <mutex>
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
/// A tensor that a call between two processes of one host brought through
/// shared memory (docs/protocol.md, "Bulk data through shared memory") holds
/// no copy of its values: data(), operator[] and operator() read and write
/// them where the caller's process put them, in memory this process has to
/// itself until the tensor is gone (in_shared_memory()). Copying the tensor
/// copies them into a vector, as copying any tensor does; values() moves
/// them into the tensor's own vector the first time it is asked for, which,
/// like a std::vector's reallocation, leaves pointers taken from data()
/// before it reading the old place.
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

  /// A tensor with the same shape and its own copy of the values.
  tensor(const tensor& other)
      : shape_(other.shape_),
        values_(other.shared_ ? std::vector<T>(other.data(), other.data() + other.size())
                              : other.values_) {}
  /// Takes the shape and a copy of the values.
  tensor& operator=(const tensor& other) {
    if (this != &other) *this = tensor(other);
    return *this;
  }
  /// Takes the shape and the values, wherever they are.
  tensor(tensor&&) noexcept = default;
  /// Takes the shape and the values, wherever they are.
  tensor& operator=(tensor&&) noexcept = default;

  /// The extent of each dimension, outermost first.
  const shape_type& shape() const noexcept { return shape_; }
  /// The number of dimensions.
  std::size_t rank() const noexcept { return shape_.size(); }
  /// The number of values: the product of the shape.
  std::size_t size() const noexcept { return shared_ ? shared_->size : values_.size(); }

  /// The values, contiguous in row-major order.
  T* data() noexcept { return shared_ ? shared_->place() : values_.data(); }
  /// The values, contiguous in row-major order.
  const T* data() const noexcept { return shared_ ? shared_->place() : values_.data(); }

  /// The values in row-major order. Keep their number: the shape does not
  /// follow it. Values still in shared memory are copied into the vector
  /// first (once), and read there from then on.
  std::vector<T>& values() {
    if (shared_) {
      values_.assign(data(), data() + size());
      shared_.reset();
    }
    return values_;
  }
  /// The values in row-major order (values still in shared memory: a copy
  /// of them, made once).
  const std::vector<T>& values() const { return shared_ ? shared_->copied() : values_; }

  /// Whether its values are still in the shared memory a call between two
  /// processes of one host brought them in, read in place.
  bool in_shared_memory() const noexcept { return shared_ && !shared_->has_copy(); }

  /// The value at this place in the row-major order; unchecked.
  T& operator[](std::size_t flat) { return data()[flat]; }
  /// The value at this place in the row-major order; unchecked.
  const T& operator[](std::size_t flat) const { return data()[flat]; }

  /// The value at one index per dimension, unchecked like operator[]:
  /// `t(i, j)` of a matrix.
  template <class... Index>
  T& operator()(Index... index) {
    return data()[offset({static_cast<std::size_t>(index)...})];
  }
  /// The value at one index per dimension, unchecked like operator[].
  template <class... Index>
  const T& operator()(Index... index) const {
    return data()[offset({static_cast<std::size_t>(index)...})];
  }

  /// Equal shapes and equal values.
  bool operator==(const tensor& other) const {
    return shape_ == other.shape_ && size() == other.size() &&
           std::equal(data(), data() + size(), other.data());
  }

 private:
  friend struct detail::tensor_access<tensor>;

  // Values in memory that `keep` keeps mapped (detail/wire/shared_memory.hpp),
  // until a const values() copies them into `copy`, where they are from
  // then on: a const tensor hands out a std::vector too.
  struct shared_values {
    T* at;
    std::size_t size;
    std::shared_ptr<void> keep;
    std::once_flag once{};
    std::atomic<bool> done{false};
    std::vector<T> copy{};

    T* place() noexcept { return has_copy() ? copy.data() : at; }
    bool has_copy() const noexcept { return done.load(std::memory_order_acquire); }
    const std::vector<T>& copied() {
      std::call_once(once, [this] {
        copy.assign(at, at + size);
        done.store(true, std::memory_order_release);
      });
      return copy;
    }
  };

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
  std::unique_ptr<shared_values> shared_;  // null: the values are values_
};

namespace detail {
// How the CBOR reader makes a tensor that reads its values in place
// (cbor_decode.hpp, read_tensor).
template <class N>
struct tensor_access<tensor<N>> {
  // `size` values at `at`, which `keep` keeps where they are; `shape`
  // holds that many.
  static tensor<N> in_place(std::vector<std::size_t> shape, N* at, std::size_t size,
                            std::shared_ptr<void> keep) {
    tensor<N> out;
    out.shape_ = std::move(shape);
    out.shared_.reset(new typename tensor<N>::shared_values{at, size, std::move(keep)});
    return out;
  }
};
}  // namespace detail

}  // namespace lp
