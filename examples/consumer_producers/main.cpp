#include <iostream>

#include "consumer_producers.hpp"

int main(int argc, char** argv) {
  lp::program p("consumer_producers");
  consumer_producers::make_program(p, 4, 1000, [](long total) {
    std::cout << "sum of squares below 1000: " << total << std::endl;
  });
  return lp::launch(p, argc, argv);
}
