#pragma once

// What a replay node's checkpoint holds: every table's items with their
// priorities and sample counts, and the counts its rate limiter paces by.

#include <boost/hana/define_struct.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace lp::detail {

template <class Item>
struct saved_item {
  BOOST_HANA_DEFINE_STRUCT(saved_item, (std::uint64_t, key), (Item, item),
                           (double, priority), (std::uint64_t, times_sampled));
};

template <class Item>
struct saved_table {
  BOOST_HANA_DEFINE_STRUCT(saved_table, (std::string, name),
                           (std::vector<saved_item<Item>>, items),  // oldest first
                           (std::uint64_t, inserts), (std::uint64_t, samples),
                           (std::uint64_t, removed));
};

template <class Item>
struct replay_state {
  BOOST_HANA_DEFINE_STRUCT(replay_state, (std::uint64_t, next_key),
                           (std::vector<saved_table<Item>>, tables));
};

}  // namespace lp::detail
