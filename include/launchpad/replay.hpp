#pragma once

/// @file
/// lp::replay, a replay buffer as a node, and its configuration
/// (docs/replay.md). Not included by `<launchpad/launchpad.hpp>`: a program
/// that uses it includes this header.

#include <boost/hana/define_struct.hpp>
#include <cstddef>
#include <cstdint>
#include <launchpad/context.hpp>
#include <launchpad/detail/replay/rate_limit.hpp>
#include <launchpad/detail/replay/selectors.hpp>
#include <launchpad/detail/replay/state.hpp>
#include <launchpad/detail/replay/table.hpp>
#include <launchpad/detail/util/type_name.hpp>
#include <launchpad/error.hpp>
#include <launchpad/service.hpp>
#include <launchpad/wire.hpp>
#include <memory>
#include <string>
#include <vector>

namespace lp {

/// An item's key in its node: unique across the node's tables, and kept
/// across restarts.
using replay_key = std::uint64_t;

/// How a table picks the item a sample returns (docs/replay.md, "Samplers
/// and removers").
class sampler {
 public:
  /// Any item, equally.
  static sampler uniform() { return {{detail::selector_kind::uniform}}; }
  /// The oldest item.
  static sampler fifo() { return {{detail::selector_kind::fifo}}; }
  /// The newest item.
  static sampler lifo() { return {{detail::selector_kind::lifo}}; }
  /// Item i with probability p_i^alpha / sum_j p_j^alpha: alpha 0 is
  /// uniform, 1 proportional to priority. Priorities must be finite and
  /// >= 0.
  /// @throws lp::usage_error unless alpha is finite and >= 0
  static sampler prioritized(double alpha) {
    return {{detail::selector_kind::prioritized, detail::checked_alpha(alpha)}};
  }
  /// The item of the highest priority; the oldest among equals.
  static sampler max_heap() { return {{detail::selector_kind::max_heap}}; }
  /// The item of the lowest priority; the oldest among equals.
  static sampler min_heap() { return {{detail::selector_kind::min_heap}}; }

  /// The choice, as the library reads it; made by the functions above.
  detail::selector_spec spec;
};

/// Which item a full table drops to make room for a new one; the new item
/// always goes in.
class remover {
 public:
  /// The oldest item.
  static remover fifo() { return {{detail::selector_kind::fifo}}; }
  /// The newest item already in: a full table keeps its oldest max_size - 1
  /// items and the latest one inserted.
  static remover lifo() { return {{detail::selector_kind::lifo}}; }
  /// The item of the lowest priority; the oldest among equals.
  static remover lowest_priority() { return {{detail::selector_kind::min_heap}}; }
  /// The item of the highest priority; the oldest among equals.
  static remover highest_priority() { return {{detail::selector_kind::max_heap}}; }
  /// Any item, equally.
  static remover uniform() { return {{detail::selector_kind::uniform}}; }

  /// The choice, as the library reads it; made by the functions above.
  detail::selector_spec spec;
};

/// When a table lets an insert or a sample go: Reverb's rate limiters
/// (docs/replay.md, "Rate limiters", works the arithmetic through).
class rate_limiter {
 public:
  /// Samples wait until the table holds n items; inserts never wait.
  static rate_limiter min_size(std::size_t n) { return {detail::min_size_limit(n)}; }
  /// About r samples per insert: once the table holds min_size items,
  /// inserts and samples each wait while going ahead would take
  /// samples - r * (inserts - min_size) out of
  /// [-error_buffer, +error_buffer].
  /// @throws lp::usage_error unless r is finite and > 0, and error_buffer
  /// >= max(1, r): narrower, calls could wait for each other forever
  static rate_limiter sample_to_insert_ratio(double r, std::size_t min_size,
                                             double error_buffer) {
    return {detail::ratio_limit(r, min_size, error_buffer)};
  }
  /// A queue of at most n items: an insert waits while n items are
  /// unsampled, a sample while none is. Use it with table_config::queue.
  /// @throws lp::usage_error for n 0
  static rate_limiter queue(std::size_t n) { return {detail::queue_limit(n)}; }

  /// The limits, as the library reads them; made by the functions above.
  detail::limiter_spec spec;
};

/// One table of an lp::replay node: its name, how it samples, evicts and
/// paces.
struct table_config {
  /// Letters, digits and _, not starting with a digit: it names the table's
  /// metrics.
  std::string name;
  lp::sampler sampler = lp::sampler::uniform();  ///< what sample() returns
  lp::remover remover = lp::remover::fifo();     ///< what a full table drops
  std::size_t max_size = 1'000'000;              ///< the most items it holds
  std::size_t max_times_sampled = 0;  ///< an item sampled this often is removed; 0: never
  /// What paces inserts against samples.
  lp::rate_limiter limiter = lp::rate_limiter::min_size(1);

  /// Reverb's queue: FIFO in and out, each item sampled once, inserts wait
  /// while the queue holds n items.
  static table_config queue(std::string name, std::size_t n) {
    return {std::move(name),           lp::sampler::fifo(), lp::remover::fifo(), n, 1,
            lp::rate_limiter::queue(n)};
  }
};

/// What an lp::replay node holds: its tables.
struct replay_config {
  std::vector<table_config> tables;  ///< at least one; names unique
  std::uint64_t seed = 0;  ///< of the samplers' and removers' draws; 0 draws one
};

/// One sampled item, as lp::replay::sample returns it: `key`, `item`,
/// `priority`, `probability` (the chance this draw had of picking it: 1 for
/// FIFO, LIFO and the heaps; for importance weights) and `times_sampled`
/// (with this sample).
template <class Item>
struct sampled {
  BOOST_HANA_DEFINE_STRUCT(sampled, (replay_key, key), (Item, item), (double, priority),
                           // The chance this draw had of picking it (1 for
                           // FIFO, LIFO and the heaps): for importance weights.
                           (double, probability),
                           (std::uint64_t, times_sampled));  // with this sample
};

/// A table's figures, as lp::replay::info() returns them: `name`, `size`,
/// `max_size`, `inserts` (since the node first started), `samples` (items
/// returned), `removed` (evicted, over-sampled or removed), and
/// `insert_blocked_seconds` and `sample_blocked_seconds` (the time calls
/// waited on the limiter).
struct table_info {
  BOOST_HANA_DEFINE_STRUCT(table_info, (std::string, name), (std::uint64_t, size),
                           (std::uint64_t, max_size),
                           (std::uint64_t, inserts),  // since the node first started
                           (std::uint64_t, samples),  // items returned
                           (std::uint64_t, removed),  // evicted, over-sampled or removed
                           (double, insert_blocked_seconds),  // waits on the limiter
                           (double, sample_blocked_seconds));
};

/// A replay buffer as a node: items go into named tables; each table samples
/// them with its sampler, evicts them with its remover past max_size, and
/// paces inserts against samples with its rate limiter (docs/replay.md).
///
/// ```cpp
/// #include <launchpad/replay.hpp>
///
/// auto replay = p.add_node<lp::replay<Transition>>("replay", lp::replay_config{
///     .tables = {{.name = "experience",
///                 .sampler = lp::sampler::prioritized(0.6),
///                 .remover = lp::remover::fifo(),
///                 .max_size = 100'000,
///                 .limiter = lp::rate_limiter::sample_to_insert_ratio(4.0, 1000, 400)}}});
/// ...
/// replay.insert("experience", transition, 1.0);  // from an actor's client
/// auto batch = replay.sample("experience", 32);   // from the learner's
/// replay.update_priorities("experience", keys, new_priorities);
/// ```
///
/// A call the limiter holds back waits, at most until the caller's deadline
/// (lp::caller_deadline(); the caller then sees lp::deadline_exceeded), and
/// ends with lp::stopping when the program stops. A bad argument (a table it
/// does not have, a priority that is negative, NaN or infinite, lists of
/// different lengths) is the caller's bad request (400 bad_request; an
/// lp::remote_error at a C++ caller), or lp::usage_error on a plain object.
/// Its items are the node's checkpoint (lp::checkpointed), and its figures
/// are metrics: `replay_<table>_size`, `_inserts_total`, `_samples_total`,
/// `_blocked_seconds_total`.
///
/// @tparam Item what the tables hold: an lp::wire_type
template <class Item>
class replay {
  static_assert(
      wire_type<Item>,
      "lp::replay<Item> sends Item over the wire: Item must be an lp::wire_type "
      "(a BOOST_HANA_DEFINE_STRUCT struct, an lp::tensor, a std::vector, ...)");

 public:
  /// Its tables' handlers wait on the limiters, so calls run side by side
  /// (lp::concurrent_handlers).
  static constexpr bool lp_concurrent_handlers = true;

  /// A node with these tables, empty.
  /// @throws lp::usage_error for a bad configuration: no table, a name used
  /// twice or not a name, a max_size of 0
  explicit replay(replay_config config)
      : tables_(
            std::make_shared<detail::replay_tables<Item>>(specs(config), config.seed)) {
    // In a node (not a test's plain object), a stop wakes every waiting call.
    if (detail::this_thread_node().launch) {
      std::weak_ptr<detail::replay_tables<Item>> tables = tables_;
      on_stop([tables] {
        if (auto alive = tables.lock()) alive->stop();
      });
      tables_->record_metrics();
    }
  }

  /// Inserts one item; waits while the limiter says so.
  /// @return its key
  replay_key insert(const std::string& table, Item item, double priority) {
    std::vector<Item> one;
    one.push_back(std::move(item));
    return tables_->find(table, "insert")
        .insert(std::move(one), {priority}, caller_deadline(), "insert")
        .front();
  }

  /// Inserts items[i] with priorities[i], all at once: the limiter lets the
  /// whole batch go or waits.
  /// @return their keys, in order
  std::vector<replay_key> insert_batch(const std::string& table, std::vector<Item> items,
                                       std::vector<double> priorities) {
    return tables_->find(table, "insert_batch")
        .insert(std::move(items), std::move(priorities), caller_deadline(),
                "insert_batch");
  }

  /// n draws, each with its key and probability, independent (with
  /// replacement) for the random samplers. Waits until the limiter allows n
  /// samples; fewer come back only if max_times_sampled empties the table
  /// in the middle.
  std::vector<sampled<Item>> sample(const std::string& table, std::uint64_t n) {
    auto drawn = tables_->find(table, "sample").sample(n, caller_deadline());
    std::vector<sampled<Item>> out;
    out.reserve(drawn.size());
    for (auto& d : drawn)
      out.push_back({d.key, *d.item, d.priority, d.probability, d.times_sampled});
    return out;
  }

  /// Sets keys[i]'s priority to priorities[i]; keys no longer in the table
  /// are skipped.
  /// @return how many were updated
  std::uint64_t update_priorities(const std::string& table, std::vector<replay_key> keys,
                                  std::vector<double> priorities) {
    return tables_->find(table, "update_priorities").update_priorities(keys, priorities);
  }

  /// Removes the keys still in the table.
  /// @return how many were
  std::uint64_t remove(const std::string& table, std::vector<replay_key> keys) {
    return tables_->find(table, "remove").remove(keys);
  }

  /// Each table's figures.
  std::vector<table_info> info() const {
    std::vector<table_info> out;
    tables_->for_each([&](const detail::replay_table<Item>& t) {
      auto f = t.figures();
      out.push_back({f.name, f.size, f.max_size, f.inserts, f.samples, f.removed,
                     f.insert_blocked_seconds, f.sample_blocked_seconds});
    });
    return out;
  }

  /// Its checkpoint (lp::checkpointed): every table's items, with priority
  /// and times sampled, and the limiters' counts. The launch saves it.
  detail::replay_state<Item> lp_save() const { return tables_->save(); }
  /// Restores a checkpoint; new keys follow the old. A table the
  /// configuration no longer has is dropped, with a line on stderr. The
  /// launch restores it.
  void lp_restore(detail::replay_state<Item> state) {
    tables_->restore(std::move(state));
  }

 private:
  static std::vector<detail::table_spec> specs(const replay_config& config) {
    std::vector<detail::table_spec> out;
    for (auto& t : config.tables)
      out.push_back({t.name, t.sampler.spec, t.remover.spec, t.max_size,
                     t.max_times_sampled, t.limiter.spec});
    return out;
  }

  std::shared_ptr<detail::replay_tables<Item>> tables_;
};

}  // namespace lp

namespace lp::detail {
// LP_SERVICE's definition, written for every Item at once: the macro
// specializes for one named type, and a program should not have to name
// lp::replay's methods to use it.
template <class Item>
struct replay_definition {
  LP_DETAIL_SERVICE_BODY(::lp::replay<Item>, (type_spelling<::lp::replay<Item>>), insert,
                         insert_batch, sample, update_priorities, remove, info)
};
}  // namespace lp::detail

namespace lp {
// Found by argument-dependent lookup: lp is replay<Item>'s namespace.
template <class Item>
detail::replay_definition<Item> lp_service_lookup(::lp_service_tag<replay<Item>>);
}  // namespace lp
