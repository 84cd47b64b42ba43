// A program whose Python node cannot start, for the slurm tests: the class
// of its LP_PYTHON service is in a module that no PYTHONPATH holds. Its
// group restarts failed nodes, which must not help here: the launch ends
// with a failure that names the node and the module, and restarts nothing.
//   python_missing --lp_launch=slurm --lp_python=PATH [--lp_... flags]
#include <chrono>
#include <launchpad/launchpad.hpp>
#include <thread>

namespace missing {

// Served by a class of a module that does not exist.
struct Ghost {
  int get();
};
LP_SERVICE(Ghost, get);
LP_PYTHON(Ghost, "lp_test_no_such_module", "Ghost");

// A C++ node that runs until the program stops: the Python node's failure
// must stop it.
struct Waiter {
  void run() {
    while (!lp::stop_requested())
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
};
LP_SERVICE(Waiter);

}  // namespace missing

int main(int argc, char** argv) {
  lp::program p("python_missing");
  p.group("ghosts")
      .restart_on_failure(3, std::chrono::milliseconds(50))
      .add_node<missing::Ghost>();
  p.add_node<missing::Waiter>("waiter");
  return lp::launch(p, argc, argv);
}
