// Three services of five methods between them: vectors, strings, doubles.
// Included by the TUs that build a graph; LP_COMPILE_COST_EXTRA adds a sixth
// method to measure what one more method costs.
#pragma once
#include <launchpad/launchpad.hpp>
#include <map>
#include <string>
#include <vector>

struct ParameterServer {
  std::vector<float> pull() const { return weights; }
  void push(const std::vector<float>& gradient, double rate) {
    for (std::size_t i = 0; i < weights.size() && i < gradient.size(); ++i)
      weights[i] -= static_cast<float>(rate) * gradient[i];
  }
#ifdef LP_COMPILE_COST_EXTRA
  std::map<std::string, double> stats(const std::string& prefix) const {
    return {{prefix + "size", static_cast<double>(weights.size())}};
  }
#endif
  std::vector<float> weights = std::vector<float>(16);
};
#ifdef LP_COMPILE_COST_EXTRA
LP_SERVICE(ParameterServer, pull, push, stats);
#else
LP_SERVICE(ParameterServer, pull, push);
#endif

struct Logger {
  void log(const std::string& who, const std::string& line) {
    lines.push_back(who + ": " + line);
  }
  std::vector<std::string> tail(int n) const {
    return {lines.end() - std::min<long>(n, static_cast<long>(lines.size())),
            lines.end()};
  }
  std::vector<std::string> lines;
};
LP_SERVICE(Logger, log, tail);

struct Worker {
  lp::client<ParameterServer> server;
  lp::client<Logger> logger;
  double score(double x) const { return x * 2; }
  void run() {
    auto w = server.pull();
    server.push(w, 0.1);
    logger.log("worker", std::to_string(w.size()));
    lp::stop();
  }
};
LP_SERVICE(Worker, score);
