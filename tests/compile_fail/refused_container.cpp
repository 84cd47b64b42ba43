// expect: this container has no wire form
// expect: wire_diagnosis<std::deque<int
// A std::deque has no wire form, even inside a std::optional: std::vector
// does the same, and its numbers travel as a typed array.
#include <boost/hana/define_struct.hpp>
#include <deque>
#include <launchpad/json.hpp>
#include <optional>

struct Queue {
  BOOST_HANA_DEFINE_STRUCT(Queue, (std::optional<std::deque<int>>, items));
};

int main() {
  lp::json j = Queue{};
  return j.is_null();
}
