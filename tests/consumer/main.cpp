// A program that uses launchpad the way a user does: a service, a program
// graph, the nodes the library defines (replay, cacher), and lp::launch. Built six ways by check.sh (meson, CMake, g++ on the
// single header: see there); each must exit 0 on its own: the client node
// calls the service, checks the answers, then stops the program.
#include <chrono>
#include <iostream>
#include <launchpad/cacher.hpp>  // each add-on header is in single_include/ too
#include <launchpad/json.hpp>    // for lp::json
#include <launchpad/launchpad.hpp>
#include <launchpad/replay.hpp>
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

using settings_cache = lp::cacher<Greeter, &Greeter::settings>;
using log = lp::replay<std::string>;

struct Caller {
  lp::client<Greeter> greeter;
  lp::client<settings_cache> cached;
  lp::client<log> replies;
  void run() {
    auto quick = greeter.with_deadline(std::chrono::seconds(30));
    std::string reply = quick.greet("consumer");
    std::future<long> doubled = quick.async.twice(21);
    if (reply != "Hello, consumer" || doubled.get() != 42 ||
        quick.settings().value("greeting", "") != "Hello")
      throw std::runtime_error("unexpected reply: " + reply);
    replies.insert("replies", reply, 1.0);
    auto sampled = replies.sample("replies", 1);
    if (sampled.size() != 1 || sampled[0].item != reply ||
        cached.settings().value("greeting", "") != "Hello")
      throw std::runtime_error("the replay or the cacher answered wrong");
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
  auto cached =
      p.add_node<consumer::settings_cache>("cached", greeter, lp::cache_config{});
  auto replies = p.add_node<consumer::log>(
      "replies", lp::replay_config{.tables = {{.name = "replies"}}});
  p.group("callers").add_node<consumer::Caller>(greeter, cached, replies);
  return lp::launch(p, argc, argv);
}
