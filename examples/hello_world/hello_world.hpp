#pragma once
// The smallest program: one node whose run() greets and stops the program.
#include <iostream>
#include <launchpad/launchpad.hpp>
#include <string>

namespace hello_world {
struct Greeter {
  std::string greeting;
  void run() {
    auto me = lp::context();
    std::cout << greeting << " from " << me.label << " of program " << me.program
              << std::endl;
    lp::stop();
  }
};
LP_SERVICE(Greeter);

inline void make_program(lp::program& p, std::string greeting) {
  p.add_node<Greeter>("greeter", std::move(greeting));
}
}  // namespace hello_world
