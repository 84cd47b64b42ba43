#include "hello_world.hpp"

int main(int argc, char** argv) {
  lp::program p("hello_world");
  hello_world::make_program(p, "Hello, world");
  return lp::launch(p, argc, argv);
}
