#pragma once

/// @file
/// lp::handle, a node's name in the program graph.

#include <string>
#include <utility>

namespace lp {

class program;

/// Names a node of a program graph; lp::program::add_node returns one.
///
/// Give it to another node's add_node arguments, where it becomes an
/// `lp::client<T>` when that node is built (also inside a std::vector); a
/// test gets a client from lp::controller::client(handle). Cheap to copy.
///
/// ```cpp
/// lp::handle<Counter> counter = p.add_node<Counter>("counter");
/// p.add_node<Producer>("producer", counter);  // Producer has an lp::client<Counter>
/// ```
///
/// A default-constructed handle is empty: it names no node (label() is ""),
/// and add_node refuses it with lp::graph_error. It lets a struct hold a
/// handle member that is assigned later.
///
/// @tparam T the service the node serves
template <class T>
class handle {
 public:
  /// The service the node serves.
  using service_type = T;

  /// An empty handle, which names no node.
  handle() = default;

  /// The node's label: "counter", or "actors/3" in a group.
  const std::string& label() const noexcept { return label_; }
  /// True for a default-constructed handle, which names no node.
  bool empty() const noexcept { return owner_ == nullptr; }

 private:
  friend class program;
  handle(const program* owner, std::string label)
      : owner_(owner), label_(std::move(label)) {}

  const program* owner_ = nullptr;
  std::string label_;

 public:
  /// The program that made this handle, to refuse handles from another graph;
  /// null for an empty handle.
  const program* owner() const noexcept { return owner_; }
};

}  // namespace lp
