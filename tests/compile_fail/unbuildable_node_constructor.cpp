// expect: add_node<T>(label, args...): T cannot be built from these arguments
// Worker's only constructor takes an int; a string neither converts to it
// nor, Worker not being an aggregate, initializes its members.
#include <launchpad/launchpad.hpp>
#include <string>

class Worker {
 public:
  explicit Worker(int n) : n_(n) {}
  void run() {}
  int n() const { return n_; }

 private:
  int n_;
};
LP_SERVICE(Worker);

void build(lp::program& p) {
  p.add_node<Worker>("worker", std::string("ten"));
}
