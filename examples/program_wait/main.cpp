// program_wait --end=node|workers|outside [--stop_after_ms=N]
// "outside" serves until Ctrl+C, or, with --stop_after_ms, until main stops it.
#include <string_view>
#include <thread>

#include "program_wait.hpp"

int main(int argc, char** argv) {
  std::string end = "node";
  int stop_after_ms = -1;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--end=")) end = arg.substr(6);
    if (arg.starts_with("--stop_after_ms="))
      stop_after_ms = std::stoi(std::string(arg.substr(16)));
  }
  lp::program p("program_wait");
  program_wait::make_program(p, end, 40);
  // From main's side, lp::stop() stops every program this process runs; it
  // asks again until the launch has returned, in case it came too early.
  std::jthread stopper;
  if (stop_after_ms >= 0)
    stopper = std::jthread([stop_after_ms](std::stop_token launch_returned) {
      std::this_thread::sleep_for(std::chrono::milliseconds(stop_after_ms));
      while (!launch_returned.stop_requested()) {
        lp::stop();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  int status = lp::launch(p, argc, argv);
  stopper.request_stop();
  return status;
}
