#pragma once
// An agent that learns CartPole-v1: IMPALA's architecture (Espeholt et al.
// 2018) as a Launchpad program (docs/agent.md).
//
//   actors/i (C++) --act(observations)--> inference (C++, LP_BATCHED)
//        |                                     | get_parameters, every 10 ms
//        | insert(unroll)                      v
//        v                                  weights (lp::cacher)
//   replay (lp::replay, a queue) <--sample-- learner (Python, PyTorch) <-'
//
// Each actor steps `envs` cart-poles. For each step it asks the inference
// node for the action probabilities of all its observations at once; the
// inference node gathers the calls of every actor that arrive together
// (LP_BATCHED) and runs the policy network on them in C++, with the
// parameters the learner last published, which it fetches through the
// cacher. After `unroll` steps an actor inserts what it saw into a queue
// (lp::replay's table_config::queue): on-policy data, each unroll used
// once. The learner, a Python node, takes `batch` unrolls at a time and
// makes one V-trace actor-critic update (impala.py), then publishes the new
// parameters. It checkpoints the network, its optimiser and its counts.
//
// --inference=torch puts a Python node in the inference node's place, which
// runs the same network in PyTorch: the docs compare the two.
#include <algorithm>
#include <atomic>
#include <boost/hana/define_struct.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <launchpad/cacher.hpp>
#include <launchpad/launchpad.hpp>
#include <launchpad/replay.hpp>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cartpole.hpp"
#include "policy.hpp"

namespace agent {

// --- What crosses between nodes. ---------------------------------------------

// The policy's parameters as the learner publishes them (impala.py,
// Network.policy_parameters), and how many updates made them.
struct parameters {
  BOOST_HANA_DEFINE_STRUCT(parameters, (long, version), (std::vector<float>, policy));
};

// What the inference node answers one actor: two probabilities per
// observation (left, right), and the version of the policy that gave them.
struct action_probabilities {
  BOOST_HANA_DEFINE_STRUCT(action_probabilities, (std::vector<float>, probabilities),
                           (long, policy_version));
};

// `unroll` steps of one actor's `envs` environments: the learner's unit.
struct unroll {
  BOOST_HANA_DEFINE_STRUCT(
      unroll,
      (lp::tensor<float>,
       observations),  // [T+1, E, 4]: acted on; the last one bootstraps
      (lp::tensor<std::int32_t>, actions),  // [T, E]
      (lp::tensor<float>, behaviour_logp),  // [T, E] log-probability of the action taken
      (lp::tensor<float>, rewards),         // [T, E]
      (lp::tensor<std::uint8_t>, terminated),   // [T, E] the pole fell
      (lp::tensor<std::uint8_t>, truncated),    // [T, E] 500 steps
      (lp::tensor<float>, final_observations),  // [T, E, 4] where an episode ended
      (std::vector<float>, episode_returns),    // of the episodes that ended in it
      (long, policy_version),                   // the oldest policy that acted in it
      (long, actor));
};

// The learner's settings (its constructor's argument, a dict in Python).
struct learner_settings {
  BOOST_HANA_DEFINE_STRUCT(learner_settings, (long, batch),  // unrolls per update
                           (double,
                            target),  // stop once the last 100 episodes average this
                           (long, max_steps),  // ... or after this many environment steps
                           (double, max_seconds),  // ... or this long
                           (long, seed), (double, learning_rate),
                           (long, hidden));  // units of each torso layer
};

// What the learner keeps across a restart (a kill -9, say): its network,
// Adam's moments and its counts. lp_save/lp_restore in the interface say
// the type; learner.py's state() and restore(value) make and take it.
struct learner_state {
  BOOST_HANA_DEFINE_STRUCT(learner_state,
                           (std::vector<float>, network),  // every parameter, flat
                           (std::vector<float>, moments),  // Adam's first and second
                           (double, adam_step), (long, updates), (long, steps),
                           (long, episodes),
                           (double, seconds),  // of training, restarts included
                           (std::vector<float>, recent_returns));  // the last 100
};

// --- The nodes. ----------------------------------------------------------------

// The learner, in PyTorch: learner.py's class Learner.
struct Learner {
  parameters get_parameters();
  void run();
  learner_state lp_save() const;
  void lp_restore(learner_state);
};
LP_SERVICE(Learner, get_parameters);
LP_PYTHON(Learner, "learner", "Learner");

// Actors never call the learner: they take its parameters from a cacher,
// which asks the learner at most every 10 ms however many ask it.
using parameters_cache = lp::cacher<Learner, &Learner::get_parameters>;

using replay_node = lp::replay<unroll>;
inline constexpr const char* table = "unrolls";

// The inference node, in C++: one call per actor step, gathered into
// batches (LP_BATCHED below).
struct Inference {
  lp::client<parameters_cache> weights;

  // One tensor [E, 4] per caller in, its probabilities out.
  std::vector<action_probabilities> act(std::vector<lp::tensor<float>> observations) {
    auto net = current();
    std::vector<action_probabilities> out(observations.size());
    for (std::size_t i = 0; i < observations.size(); ++i) {
      const auto& o = observations[i];
      std::size_t n = o.size() / mlp_policy::inputs;
      out[i].probabilities.resize(2 * n);
      net->probabilities(o.data(), n, out[i].probabilities.data());
      out[i].policy_version = net->version();
    }
    return out;
  }

  // Fetches the learner's latest parameters every 10 ms; act() serves with
  // the last ones it got.
  void run() {
    while (!lp::stop_requested()) {
      try {
        refresh();
      } catch (const lp::stopping&) {
        return;
      } catch (const lp::remote_error&) {
        // The learner restarts (a kill -9, say): serve the last parameters
        // until the cacher has new ones.
      } catch (const lp::transport_error&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::shared_ptr<const mlp_policy> current() {
    {
      std::lock_guard lock(mutex);
      if (net) return net;
    }
    refresh();  // the first call: the learner's initial parameters
    std::lock_guard lock(mutex);
    return net;
  }

  void refresh() {
    auto latest = weights.get_parameters();
    {
      std::lock_guard lock(mutex);
      // A restored learner counts from its checkpoint: any other version
      // is news, a lower one too.
      if (net && net->version() == latest.version) return;
    }
    auto fresh = std::make_shared<const mlp_policy>(latest.policy, latest.version);
    std::lock_guard lock(mutex);
    net = std::move(fresh);
  }

  std::mutex mutex{};
  std::shared_ptr<const mlp_policy> net{};
};
LP_SERVICE(Inference, act);
// Calls that come while a batch runs form the next batch; no call waits for
// others to come (max_wait 0), which would only add to every step's time.
LP_BATCHED(Inference, act, 64, std::chrono::microseconds(0));

// The same inference in PyTorch: torch_inference.py's class TorchInference.
// Not batched across actors (LP_BATCHED is C++'s only): each call is one
// actor's observations, a batch of `envs`.
struct TorchInference {
  action_probabilities act(lp::tensor<float> observations);
};
LP_SERVICE(TorchInference, act);
LP_PYTHON(TorchInference, "torch_inference", "TorchInference");

struct actor_settings {
  long envs = 16;    // cart-poles each actor steps
  long unroll = 16;  // steps of each in an unroll
  long seed = 0;
};

// Where an actor's time goes, in seconds: its counters on the status page
// and at /lp/v1/metrics (actor_*_seconds_total), and a line when it stops.
struct actor_clock {
  using clock = std::chrono::steady_clock;
  lp::metrics::counter stepping{"actor_stepping_seconds"};
  lp::metrics::counter inference{"actor_inference_seconds"};
  lp::metrics::counter inserting{"actor_inserting_seconds"};
  lp::metrics::counter steps{"actor_env_steps"};
  lp::metrics::counter episodes{"actor_episodes"};
  double total[3] = {0, 0, 0};
  clock::time_point mark = clock::now();
  // Adds the time since the last lap to phase `i` (0 stepping, 1 inference,
  // 2 inserting).
  void lap(int i) {
    auto now = clock::now();
    double s = std::chrono::duration<double>(now - mark).count();
    mark = now;
    total[i] += s;
    (i == 0 ? stepping : i == 1 ? inference : inserting).add(s);
  }
};

// The actor's loop, for either inference node.
template <class Policy>
void play(lp::client<Policy>& policy, lp::client<replay_node>& replay,
          const actor_settings& s, long id) {
  const std::size_t E = static_cast<std::size_t>(s.envs),
                    T = static_cast<std::size_t>(s.unroll);
  std::mt19937 rng(static_cast<unsigned>(s.seed * 1000 + id));
  std::uniform_real_distribution<float> uniform(0.f, 1.f);
  std::vector<cartpole> envs(E);
  std::vector<float> returns(E, 0.f);
  lp::tensor<float> observation({E, 4});
  for (std::size_t e = 0; e < E; ++e) {
    auto o = envs[e].reset(rng);
    std::copy(o.begin(), o.end(), observation.data() + 4 * e);
  }
  // An insert waits while the queue is full; a second at a time, to notice
  // a stop.
  auto patient_replay = replay.with_deadline(std::chrono::seconds(1));
  actor_clock time;
  long steps = 0, episodes = 0;
  try {
    while (!lp::stop_requested()) {
      unroll u{lp::tensor<float>({T + 1, E, 4}),
               lp::tensor<std::int32_t>({T, E}),
               lp::tensor<float>({T, E}),
               lp::tensor<float>({T, E}),
               lp::tensor<std::uint8_t>({T, E}),
               lp::tensor<std::uint8_t>({T, E}),
               lp::tensor<float>({T, E, 4}),
               {},
               -1,
               id};
      for (std::size_t t = 0; t < T; ++t) {
        std::copy(observation.data(), observation.data() + 4 * E,
                  &u.observations(t, 0, 0));
        time.lap(0);
        auto answer = policy.act(observation);
        time.lap(1);
        if (u.policy_version < 0) u.policy_version = answer.policy_version;
        for (std::size_t e = 0; e < E; ++e) {
          float right = answer.probabilities[2 * e + 1];
          int action = uniform(rng) < right ? 1 : 0;
          u.actions(t, e) = action;
          u.behaviour_logp(t, e) =
              std::log(std::max(action ? right : 1.f - right, 1e-8f));
          auto result = envs[e].step(action);
          u.rewards(t, e) = result.reward;
          returns[e] += result.reward;
          cartpole::observation next = envs[e].observe();
          if (result.terminated || result.truncated) {
            u.terminated(t, e) = result.terminated;
            u.truncated(t, e) = result.truncated;
            std::copy(next.begin(), next.end(), &u.final_observations(t, e, 0));
            u.episode_returns.push_back(returns[e]);
            returns[e] = 0;
            ++episodes;
            time.episodes.add(1);
            next = envs[e].reset(rng);
          }
          std::copy(next.begin(), next.end(), observation.data() + 4 * e);
        }
        steps += static_cast<long>(E);
      }
      std::copy(observation.data(), observation.data() + 4 * E, &u.observations(T, 0, 0));
      time.steps.add(static_cast<double>(E * T));
      time.lap(0);
      for (;;) {
        try {
          patient_replay.insert(table, u, 1.0);
          break;
        } catch (const lp::deadline_exceeded&) {
          if (lp::stop_requested()) break;  // the queue stays full: the learner stopped
        }
      }
      time.lap(2);
    }
  } catch (const lp::stopping&) {
    // The program stops: a call in flight ends so.
  } catch (const lp::transport_error&) {
    if (!lp::stop_requested()) throw;  // a node went away while the program stops
  }
  double all = time.total[0] + time.total[1] + time.total[2];
  if (all > 0) {
    char line[256];
    std::snprintf(
        line, sizeof line,
        "actor %ld: %ld steps, %ld episodes in %.1f s: stepping %.0f%%, waiting on "
        "inference %.0f%%, inserting %.0f%%",
        id, steps, episodes, all, 100 * time.total[0] / all, 100 * time.total[1] / all,
        100 * time.total[2] / all);
    std::cout << line << std::endl;  // behind the node's label under every policy
  }
}

struct Actor {
  lp::client<Inference> policy;
  lp::client<replay_node> replay;
  actor_settings settings;
  long id;
  void run() { play(policy, replay, settings, id); }
};
LP_SERVICE(Actor);

struct TorchActor {
  lp::client<TorchInference> policy;
  lp::client<replay_node> replay;
  actor_settings settings;
  long id;
  void run() { play(policy, replay, settings, id); }
};
LP_SERVICE(TorchActor);

// --- The program. ----------------------------------------------------------------

struct options {
  long actors = 2;
  actor_settings actor{};
  learner_settings learner{2, 475.0, 5'000'000, 600.0, 0, 1e-3, 64};
  std::string inference = "cpp";  // or "torch"
  long queue = 0;                 // unrolls the queue holds; 0: 2 batches
  long checkpoint_seconds = 10;
};

inline void make_program(lp::program& p, const options& o) {
  long queue = o.queue > 0 ? o.queue : 2 * o.learner.batch;
  auto replay = p.add_node<replay_node>(
      "replay", lp::replay_config{.tables = {lp::table_config::queue(
                                      table, static_cast<std::size_t>(queue))}});
  // A learner killed (kill -9, an OOM) comes back from its last checkpoint;
  // the replay node, another process, keeps what it holds meanwhile.
  auto learner = p.group("learner")
                     .checkpoint_every(std::chrono::seconds(o.checkpoint_seconds))
                     .restart_on_failure(3, std::chrono::milliseconds(200))
                     .add_node<Learner>(replay, o.learner);
  auto weights = p.add_node<parameters_cache>(
      "weights", learner,
      lp::cache_config{.refresh = std::chrono::milliseconds(10),
                       .max_staleness = std::chrono::seconds(30)});
  auto actors = p.group("actors");
  if (o.inference == "torch") {
    auto inference = p.add_node<TorchInference>("inference", weights, o.learner.hidden);
    for (long i = 0; i < o.actors; ++i)
      actors.add_node<TorchActor>(inference, replay, o.actor, i);
  } else {
    auto inference = p.add_node<Inference>("inference", weights);
    for (long i = 0; i < o.actors; ++i)
      actors.add_node<Actor>(inference, replay, o.actor, i);
  }
}

}  // namespace agent
