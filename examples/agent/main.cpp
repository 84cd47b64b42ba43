// An agent that learns CartPole-v1: C++ actors and cart-poles, batched C++
// inference, a replay queue and a PyTorch learner (IMPALA with V-trace).
// docs/agent.md says how to run it and what it measured.
//
//   cd examples/agent
//   PYTHONPATH=../../python <build>/examples/agent/agent --lp_python=/usr/bin/python3
//
// Its own flags (the --lp_ ones are Launchpad's, docs/launching.md):
//   --actors=N         actor nodes (2)
//   --envs=N           cart-poles each actor steps (16)
//   --unroll=N         steps of each in one unroll (16)
//   --batch=N          unrolls per learner update (2)
//   --inference=cpp    the inference node: cpp (LP_BATCHED, C++) or torch (PyTorch)
//   --target=R         stop once the last 100 episodes average R (475; 0: never)
//   --max_steps=N      ... or after N environment steps (5000000)
//   --max_seconds=S    ... or S seconds of training (600)
//   --seed=N           the learner's and actors' seed (0)
//   --learning_rate=X  Adam's (0.001)
//   --hidden=N         units of each of the network's two layers (64)
//   --queue=N          unrolls the replay queue holds (2 x batch)
//   --checkpoint_seconds=N  the learner's checkpoint period (10)
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "agent.hpp"

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "agent: %s (see the flags at the top of examples/agent/main.cpp)\n",
               why.c_str());
  std::exit(2);
}

template <class Number>
Number number(std::string_view flag, std::string_view text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    usage("--" + std::string(flag) + "=" + std::string(text) + " is not a number");
  return value;
}

agent::options parse(int argc, char** argv) {
  agent::options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.starts_with("--lp_")) {
      // Launchpad's: a value may be the next argument.
      if (arg.find('=') == std::string_view::npos && i + 1 < argc &&
          !std::string_view(argv[i + 1]).starts_with("--"))
        ++i;
      continue;
    }
    auto eq = arg.find('=');
    if (!arg.starts_with("--") || eq == std::string_view::npos)
      usage("unknown argument " + std::string(arg));
    auto name = arg.substr(2, eq - 2), value = arg.substr(eq + 1);
    if (name == "actors")
      o.actors = number<long>(name, value);
    else if (name == "envs")
      o.actor.envs = number<long>(name, value);
    else if (name == "unroll")
      o.actor.unroll = number<long>(name, value);
    else if (name == "batch")
      o.learner.batch = number<long>(name, value);
    else if (name == "inference")
      o.inference = std::string(value);
    else if (name == "target")
      o.learner.target = number<double>(name, value);
    else if (name == "max_steps")
      o.learner.max_steps = number<long>(name, value);
    else if (name == "max_seconds")
      o.learner.max_seconds = number<double>(name, value);
    else if (name == "seed")
      o.learner.seed = o.actor.seed = number<long>(name, value);
    else if (name == "learning_rate")
      o.learner.learning_rate = number<double>(name, value);
    else if (name == "hidden")
      o.learner.hidden = number<long>(name, value);
    else if (name == "queue")
      o.queue = number<long>(name, value);
    else if (name == "checkpoint_seconds")
      o.checkpoint_seconds = number<long>(name, value);
    else
      usage("unknown flag --" + std::string(name));
  }
  if (o.inference != "cpp" && o.inference != "torch")
    usage("--inference is cpp or torch");
  if (o.actors < 1 || o.actor.envs < 1 || o.actor.unroll < 1 || o.learner.batch < 1 ||
      o.learner.hidden < 1 || o.queue < 0 || o.checkpoint_seconds < 1)
    usage(
        "--actors, --envs, --unroll, --batch, --hidden and --checkpoint_seconds are at "
        "least 1");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  auto options = parse(argc, argv);
  lp::program p("agent");
  agent::make_program(p, options);
  return lp::launch<lp::local_multi_processing>(p, argc, argv);
}
