#include <iostream>

#include "batching.hpp"

int main(int argc, char** argv) {
  lp::program p("batching");
  batching::make_program(p, 32, 50, [](const batching::Summary& s) {
    std::cout << s.calls << " actions for 32 actors in " << s.batches
              << " invocations of act() ("
              << static_cast<double>(s.calls) / static_cast<double>(s.batches)
              << " per batch), " << s.wrong << " wrong" << std::endl;
  });
  return lp::launch(p, argc, argv);
}
