#pragma once

// A table's rate limiter: Reverb's arithmetic on the table's insert and
// sample counts (docs/replay.md, "Rate limiters", works an example).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <launchpad/error.hpp>
#include <limits>
#include <string>

namespace lp::detail {

// diff = samples_per_insert * inserts - samples. Once the table holds
// min_size items, an insert may go if diff stays <= max_diff after it, a
// sample if diff stays >= min_diff; below min_size every insert goes and no
// sample does.
struct limiter_spec {
  double samples_per_insert = 1;
  std::uint64_t min_size = 1;
  double min_diff = -std::numeric_limits<double>::infinity();
  double max_diff = std::numeric_limits<double>::infinity();
};

inline limiter_spec min_size_limit(std::size_t n) {
  return {1, static_cast<std::uint64_t>(std::max<std::size_t>(n, 1))};
}

inline limiter_spec ratio_limit(double r, std::size_t min_size, double error_buffer) {
  if (!(r > 0) || !std::isfinite(r))
    throw usage_error(
        "lp::rate_limiter::sample_to_insert_ratio(" + std::to_string(r) +
        ", ...): the ratio must be a finite number > 0 of samples per insert");
  // Narrower, and one insert or sample could take diff from below the
  // window to above it: both sides would wait for ever.
  if (!(error_buffer >= std::max(1.0, r)))
    throw usage_error(
        "lp::rate_limiter::sample_to_insert_ratio(" + std::to_string(r) + ", " +
        std::to_string(min_size) + ", " + std::to_string(error_buffer) +
        "): error_buffer must be at least max(1, ratio), or inserts and samples "
        "could each wait for the other; raise it");
  double offset = r * static_cast<double>(std::max<std::size_t>(min_size, 1));
  return {r, static_cast<std::uint64_t>(std::max<std::size_t>(min_size, 1)),
          offset - error_buffer, offset + error_buffer};
}

inline limiter_spec queue_limit(std::size_t n) {
  if (n == 0)
    throw usage_error("lp::rate_limiter::queue(0): a queue holds at least one item");
  return {1, 1, 0, static_cast<double>(n)};
}

struct rate_limit {
  limiter_spec spec;
  std::uint64_t inserts = 0, samples = 0;

  double diff(std::uint64_t more_inserts, std::uint64_t more_samples) const {
    return spec.samples_per_insert * static_cast<double>(inserts + more_inserts) -
           static_cast<double>(samples + more_samples);
  }
  bool can_insert(std::uint64_t n, std::uint64_t size) const {
    return size + n <= spec.min_size || diff(n, 0) <= spec.max_diff;
  }
  bool can_sample(std::uint64_t n, std::uint64_t size) const {
    return size >= spec.min_size && diff(0, n) >= spec.min_diff;
  }
};

}  // namespace lp::detail
