// A program that uses launchpad the way a user does: a service, a program
// graph, and lp::launch. Built six ways by check.sh (meson, CMake, g++ on the
// single header: see there); each must exit 0 on its own: the client node
// calls the service, checks the answers, then stops the program.
#include <chrono>
#include <iostream>
#include <launchpad/json.hpp>  // for lp::json, also from single_include/
#include <launchpad/launchpad.hpp>
#include <stdexcept>
#include <string>

namespace consumer {

struct Greeter {
  std::string greeting;
  std::string greet(const std::string& name) const { return greeting + ", " + name; }
  long twice(long x) const { return 2 * x; }
  lp::json settings() const { return {{"greeting", greeting}}; }
};
LP_SERVICE(Greeter, greet, twice, settings);

struct Caller {
  lp::client<Greeter> greeter;
  void run() {
    auto quick = greeter.with_deadline(std::chrono::seconds(30));
    std::string reply = quick.greet("consumer");
    std::future<long> doubled = quick.async.twice(21);
    if (reply != "Hello, consumer" || doubled.get() != 42 ||
        quick.settings().value("greeting", "") != "Hello")
      throw std::runtime_error("unexpected reply: " + reply);
    std::cout << reply << " (launchpad " << lp::version.string << ", node "
              << lp::context().label << ")" << std::endl;
    lp::stop();
  }
};
LP_SERVICE(Caller);  // no remote methods, has run()

}  // namespace consumer

int main(int argc, char** argv) {
  lp::program p("consumer");
  auto greeter = p.add_node<consumer::Greeter>("greeter", "Hello");
  p.group("callers").add_node<consumer::Caller>(greeter);
  return lp::launch(p, argc, argv);
}
