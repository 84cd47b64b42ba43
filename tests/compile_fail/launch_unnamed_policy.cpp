// expect: P is none of the policies that --lp_launch names
// A policy of the user's own satisfies the concept but has no launcher:
// lp::launch finds its launcher by type, at compile time, not by its name.
#include <launchpad/launchpad.hpp>

struct Idle {
  void run() {}
};
LP_SERVICE(Idle);

struct my_cluster {
  static constexpr std::string_view flag = "my_cluster";
  static constexpr bool from_command_line = true;
  using transport = lp::http_transport;
};

int main(int argc, char** argv) {
  lp::program p("misuse");
  p.add_node<Idle>("idle");
  return lp::launch<my_cluster>(p, argc, argv);
}
