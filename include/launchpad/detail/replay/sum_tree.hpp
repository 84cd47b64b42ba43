#pragma once

// The prioritized sampler's tree of sums: leaf i holds item i's weight,
// each inner node the sum of its two children, so a draw and an update
// cost O(log n).

#include <cstddef>
#include <vector>

namespace lp::detail {

class sum_tree {
 public:
  std::size_t size() const { return size_; }
  double total() const { return size_ ? nodes_[1] : 0.0; }
  double weight(std::size_t i) const { return nodes_[capacity_ + i]; }

  void push_back(double w) {
    if (size_ == capacity_) grow();
    set(size_++, w);
  }
  // Leaf i takes the last leaf's weight and the tree shrinks by one.
  void swap_remove(std::size_t i) {
    std::size_t last = size_ - 1;
    if (i != last) set(i, weight(last));
    set(last, 0);
    --size_;
  }
  // A parent is recomputed from its children, never adjusted by a
  // difference: sums do not drift however many updates come.
  void set(std::size_t i, double w) {
    std::size_t at = capacity_ + i;
    nodes_[at] = w;
    for (at /= 2; at >= 1; at /= 2) nodes_[at] = nodes_[2 * at] + nodes_[2 * at + 1];
  }
  // The leaf whose cumulative range holds u, for u in [0, total()).
  std::size_t find(double u) const {
    std::size_t at = 1;
    while (at < capacity_) {
      double left = nodes_[2 * at];
      // A zero-weight leaf is never picked, even when rounding puts u at its edge.
      if (u < left || nodes_[2 * at + 1] <= 0)
        at = 2 * at;
      else {
        u -= left;
        at = 2 * at + 1;
      }
    }
    std::size_t i = at - capacity_;
    return i < size_ ? i : size_ - 1;
  }

 private:
  void grow() {
    std::size_t capacity = capacity_ ? 2 * capacity_ : 16;
    std::vector<double> nodes(2 * capacity, 0.0);
    for (std::size_t i = 0; i < size_; ++i) nodes[capacity + i] = weight(i);
    for (std::size_t at = capacity - 1; at >= 1; --at)
      nodes[at] = nodes[2 * at] + nodes[2 * at + 1];
    nodes_.swap(nodes);
    capacity_ = capacity;
  }

  std::vector<double> nodes_;  // 1-based heap layout; leaves from capacity_
  std::size_t capacity_ = 0, size_ = 0;
};

}  // namespace lp::detail
