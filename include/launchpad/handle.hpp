#pragma once

#include <string>

namespace lp {

class program;

// Names a node of a program graph; add_node returns one. Give it to another
// node's add_node arguments, where it becomes an lp::client<T> when that node
// is built (also inside a std::vector). Cheap to copy.
template <class T>
class handle {
 public:
  using service_type = T;
  const std::string& label() const noexcept { return label_; }

 private:
  friend class program;
  handle(const program* owner, std::string label) : owner_(owner), label_(std::move(label)) {}

  const program* owner_;
  std::string label_;

 public:
  // The program that made this handle, to refuse handles from another graph.
  const program* owner() const noexcept { return owner_; }
};

}  // namespace lp
