// A C++ program that a Launchpad program runs as one of its nodes
// (launchpad.CppNode; launch.py beside this file, and
// docs/coming_from_launchpad.md, "Calling a C++ node"). It is an ordinary
// program of the library: run alone, it serves its calculator until
// stopped (Ctrl+C); as a CppNode, the Launchpad program's launcher starts
// it as one of its node processes, which runs the node calculator.

#include <launchpad/launchpad.hpp>
#include <string>
#include <vector>

namespace launchpad_cpp {
struct Calculator {
  long add(long a, long b) { return a + b; }
  std::vector<double> scale(std::vector<double> values, double factor) {
    for (auto& value : values) value *= factor;
    return values;
  }
  std::string greet(std::string name) { return "hello, " + name + ", from C++"; }
};
LP_SERVICE(Calculator, add, scale, greet);
}  // namespace launchpad_cpp

int main(int argc, char** argv) {
  lp::program p("calculator");
  p.add_node<launchpad_cpp::Calculator>("calculator");
  return lp::launch(p, argc, argv);
}
