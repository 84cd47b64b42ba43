#pragma once
// The shape of a distributed RL agent (as in Ape-X or R2D2), small enough to
// read: actors play a grid world and insert what they saw into a replay node
// (lp::replay); a learner samples it, improves a Q-table and serves it;
// actors fetch the latest table now and then through a cacher (lp::cacher),
// so that however many actors there are, the learner answers a few calls a
// second. Here the "network" is a table of 100 floats and the learner is
// tabular Q-learning, but the graph is the one a deep-RL agent has. The
// replay node and the learner checkpoint their state: a restarted one goes
// on from its last checkpoint, and a later launch resumes with --lp_resume.
#include <algorithm>
#include <boost/hana/define_struct.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <launchpad/cacher.hpp>
#include <launchpad/json.hpp>  // transition converts with NLOHMANN_DEFINE_TYPE_INTRUSIVE
#include <launchpad/launchpad.hpp>
#include <launchpad/replay.hpp>
#include <mutex>
#include <random>
#include <vector>

namespace actor_learner {

// What moves between learner and actors: a Q-table as a tensor of
// [state, action] values, which travels as raw float32 bytes (CBOR typed
// array), however large the network behind it grows.
using parameters = lp::tensor<float>;

// --- The environment: plain C++, no Launchpad. -------------------------------
//
//   S . . . .     S: start        G: goal, reward +1, the episode ends
//   . . . X .     X: pit, reward -1, the episode ends
//   . . . . .     A move into the border stays put. After 50 moves the
//   . X . . .     episode ends with reward 0. A random walk falls into a
//   . . . . G     pit 9 times in 10.
struct grid_world {
  static constexpr int side = 5, num_states = side * side, num_actions = 4,
                       max_steps = 50;

  struct outcome {
    int state;
    float reward;
    bool done;
  };

  int reset() {
    row = col = steps = 0;
    return 0;
  }
  outcome step(int action) {  // 0 up, 1 right, 2 down, 3 left
    static constexpr int drow[] = {-1, 0, 1, 0}, dcol[] = {0, 1, 0, -1};
    row = std::clamp(row + drow[action], 0, side - 1);
    col = std::clamp(col + dcol[action], 0, side - 1);
    ++steps;
    int state = row * side + col;
    if (row == side - 1 && col == side - 1) return {state, 1.0f, true};
    if ((row == 1 && col == 3) || (row == 3 && col == 1)) return {state, -1.0f, true};
    return {state, 0.0f, steps == max_steps};
  }

  int row = 0, col = 0, steps = 0;
};

// The action with the highest value in `state` (the first one on a tie).
inline int greedy(const parameters& q, int state) {
  const float* first = &q(state, 0);  // a row: the values of every action
  return static_cast<int>(std::max_element(first, first + grid_world::num_actions) -
                          first);
}

// What an actor does: explore (a random action) with probability `epsilon`,
// else the best action, with ties broken at random: at first every value is
// 0, and "always the first action" would explore nothing.
inline int epsilon_greedy(const parameters& q, int state, double epsilon,
                          std::mt19937& rng) {
  if (std::bernoulli_distribution(epsilon)(rng))
    return std::uniform_int_distribution<int>(0, grid_world::num_actions - 1)(rng);
  float best = q(state, greedy(q, state));
  std::vector<int> ties;
  for (int action = 0; action < grid_world::num_actions; ++action)
    if (q(state, action) == best) ties.push_back(action);
  return ties[std::uniform_int_distribution<std::size_t>(0, ties.size() - 1)(rng)];
}

// The average return of `policy(state, rng)` over `episodes` episodes.
template <class Policy>
double average_return(Policy policy, int episodes, unsigned seed) {
  std::mt19937 rng(seed);
  grid_world env;
  double total = 0;
  for (int e = 0; e < episodes; ++e) {
    int state = env.reset();
    for (bool done = false; !done;) {
      auto next = env.step(policy(state, rng));
      total += next.reward;
      state = next.state;
      done = next.done;
    }
  }
  return total / episodes;
}

// How the greedy policy of `q` does, next to a policy that picks at random.
struct evaluation {
  double learned;
  double random;
};
inline evaluation evaluate(const parameters& q) {
  std::uniform_int_distribution<int> any_action(0, grid_world::num_actions - 1);
  return {
      average_return([&](int state, std::mt19937&) { return greedy(q, state); }, 100, 1),
      average_return([&](int, std::mt19937& rng) { return any_action(rng); }, 1000, 1)};
}

// One step of experience.
struct transition {
  int state = 0;
  int action = 0;
  float reward = 0;
  int next_state = 0;
  bool done = false;
  NLOHMANN_DEFINE_TYPE_INTRUSIVE(transition, state, action, reward, next_state, done)
};

// What the learner keeps across a restart, and takes up again from a later
// launch's --lp_resume (docs/launching.md, "Fault tolerance"): what its
// lp_save() returns. The replay node (lp::replay) checkpoints its items itself.
struct learner_state {
  BOOST_HANA_DEFINE_STRUCT(learner_state, (parameters, q), (long, updates_done));
};

// --- The nodes. ---------------------------------------------------------------

// The replay node is the library's, as Reverb is Acme's: one table of the
// 2000 latest transitions, sampled uniformly. Its rate limiter (Reverb's
// SampleToInsertRatio) lets sampling start at 500 transitions, then about 8
// samples per inserted one: a learner that outran the actors would fit the
// first few episodes over and over, and actors that outran the learner would
// fill the table with what old policies did. With the limit, what is learned
// depends on the data and not on how fast each thread happens to run. The
// error buffer is wider than a whole episode's inserts (8 x 50): an insert
// of a batch goes through whole or not at all.
using replay_node = lp::replay<transition>;
inline constexpr const char* table = "experience";
inline lp::replay_config replay_tables() {
  return {
      .tables = {{.name = table,
                  .sampler = lp::sampler::uniform(),
                  .remover = lp::remover::fifo(),
                  .max_size = 2000,
                  .limiter = lp::rate_limiter::sample_to_insert_ratio(8.0, 500, 800)}},
      .seed = 1};
}

struct learner_config {
  long updates = 400;  // batches to learn from, then stop
  int batch = 64;      // transitions per batch
  float learning_rate = 0.2f;
  float discount = 0.9f;
};

// Learns from the replay buffer and serves the latest Q-table to the actors.
struct Learner {
  lp::client<replay_node> replay;
  learner_config config;
  // Called with the final parameters once learning is done (on the learner's
  // node, in the learner's process).
  std::function<void(const parameters&)> report;

  // run() writes what get_parameters() and done() read, on other threads:
  // unlike the calls among themselves, these need a lock.
  mutable std::mutex mutex{};
  parameters q = parameters({grid_world::num_states, grid_world::num_actions});  // zeros
  long updates_done = 0;

  parameters get_parameters() const {
    std::lock_guard lock(mutex);
    return q;
  }
  bool done() const {
    std::lock_guard lock(mutex);
    return updates_done == config.updates;
  }

  // run() changes the state too: it is taken under the lock.
  learner_state lp_save() const {
    std::lock_guard lock(mutex);
    return {q, updates_done};
  }
  void lp_restore(learner_state saved) {
    std::lock_guard lock(mutex);
    q = std::move(saved.q);
    updates_done = saved.updates_done;
  }

  void run() {
    // Waits until the replay node serves, restored if the launch resumes, so
    // that even a learner restored as done ends the program only after it:
    // the replay's items are part of what a resumed launch goes on from.
    (void)replay.info();
    // A restored learner goes on from where its checkpoint left off.
    for (long u = updates_done; u < config.updates;) {
      // Waits while the rate limiter says so; when the program stops, the
      // wait ends with lp::stopping, which ends run() cleanly.
      auto batch = replay.sample(table, static_cast<std::uint64_t>(config.batch));
      if (lp::stop_requested()) return;
      std::lock_guard lock(mutex);
      for (const auto& [key, t, priority, probability, times] : batch) {
        // Q-learning: move Q(s, a) towards r + discount * max over a' of Q(s', a').
        float target = t.reward;
        if (!t.done) target += config.discount * q(t.next_state, greedy(q, t.next_state));
        float& value = q(t.state, t.action);
        value += config.learning_rate * (target - value);
      }
      updates_done = ++u;
    }
    // done() now answers true: the actors finish their episode and return,
    // and once every run() has returned the program stops by itself.
    report(get_parameters());
  }
};
LP_SERVICE(Learner, get_parameters, done);

// What actors fetch the learner's parameters through: one call to the
// learner per 50 ms however many actors ask (lp::cacher, docs/cacher.md),
// and never parameters older than half a second.
using parameters_cache = lp::cacher<Learner, &Learner::get_parameters>;

// Plays epsilon-greedy episodes with the latest parameters it fetched.
struct Actor {
  lp::client<Learner> learner;           // whether it is done
  lp::client<parameters_cache> weights;  // its parameters, through the cacher
  lp::client<replay_node> replay;
  double epsilon;  // how often to explore: each actor its own, as in Ape-X
  unsigned seed;   // seeded, so that a run can be repeated
  // Episodes between fetches: fresh enough, and fewer calls.
  int fetch_every = 4;

  void run() {
    // This actor's figures, plotted on the status page: kept, not looked up
    // each episode.
    lp::metrics::series returns("episode_return");
    lp::metrics::counter episodes("episodes");
    std::mt19937 rng(seed);
    grid_world env;
    parameters q;
    // An insert waits while the learner is behind: a second at a time, so
    // that an actor notices when the learner is done and samples no more.
    auto patient_replay = replay.with_deadline(std::chrono::seconds(1));
    for (long episode = 0; !lp::stop_requested(); ++episode) {
      if (episode % fetch_every == 0) {
        if (learner.done()) return;
        q = weights.get_parameters();
      }
      std::vector<transition> seen;
      int state = env.reset();
      float episode_return = 0;
      for (bool done = false; !done;) {
        int action = epsilon_greedy(q, state, epsilon, rng);
        auto next = env.step(action);
        seen.push_back({state, action, next.reward, next.state, next.done});
        episode_return += next.reward;
        state = next.state;
        done = next.done;
      }
      try {
        patient_replay.insert_batch(table, seen, std::vector<double>(seen.size(), 1.0));
      } catch (const lp::deadline_exceeded&) {
        if (learner.done()) return;  // else the episode is dropped: there are more
      }
      returns.record(episode_return);
      episodes.add(1);
    }
  }
};
LP_SERVICE(Actor);

struct handles {
  lp::handle<Learner> learner;
  lp::handle<replay_node> replay;
  lp::handle<parameters_cache> weights;
};

inline handles make_program(lp::program& p, int num_actors, learner_config config,
                            std::function<void(const parameters&)> report) {
  auto replay = p.add_node<replay_node>("replay", replay_tables());
  auto learner = p.add_node<Learner>("learner", replay, config, std::move(report));
  auto weights = p.add_node<parameters_cache>(
      "weights", learner,
      lp::cache_config{.refresh = std::chrono::milliseconds(50),
                       .max_staleness = std::chrono::milliseconds(500)});
  auto actors = p.group("actors");
  for (int i = 0; i < num_actors; ++i)
    actors.add_node<Actor>(learner, weights, replay, 0.5 / (1 + i),
                           static_cast<unsigned>(100 + i));
  return {learner, replay, weights};
}

}  // namespace actor_learner
