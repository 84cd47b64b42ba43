#pragma once

#include <chrono>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/reply_sink.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/error.hpp>
#include <span>
#include <string>
#include <string_view>

namespace lp::detail {

// How long a call may take unless its client says otherwise
// (client::with_deadline): generous, as a method may have real work to do.
inline constexpr std::chrono::milliseconds default_deadline{std::chrono::minutes(2)};

// When a call gives up: fixed by the client when the call is made, so an
// async call that waits for a pool thread spends its own deadline waiting.
struct call_deadline {
  std::chrono::steady_clock::time_point at;
  std::chrono::milliseconds length;  // as the client set it, for messages
  // When the caller made the call: a direct call's metrics time it from
  // here, which saves a clock read on a call of well under a microsecond.
  std::chrono::steady_clock::time_point made;

  static call_deadline from_now(std::chrono::milliseconds length) {
    auto now = std::chrono::steady_clock::now();
    return {now + length, length, now};
  }
  // What is left of it; zero once it has passed.
  std::chrono::steady_clock::duration left() const {
    auto rest = at - std::chrono::steady_clock::now();
    return rest > rest.zero() ? rest : rest.zero();
  }
};

// What a call that got no reply within its deadline raises; `why` adds what
// became of the call.
inline deadline_exceeded expired_call(const std::string& node, const std::string& method,
                                      std::chrono::milliseconds deadline,
                                      const std::string& why) {
  return deadline_exceeded(node, method,
                           "no reply within the deadline of " +
                               std::to_string(deadline.count()) + " ms" + why);
}

// How a client reaches one node. The launch policy picks the implementation
// (HTTP today); clients and the reflection code never know which.
class channel {
 public:
  virtual ~channel() = default;
  // Sends the positional arguments, a CBOR array in consecutive pieces
  // whose large typed arrays are at `arrays`, and returns the reply
  // (read_result makes it the result or the error), or throws
  // lp::transport_error / lp::deadline_exceeded (when no reply came by
  // `deadline`). A channel may hand a large reply to `sink` (null: none)
  // and return it `placed`, and send the arrays through shared memory.
  virtual raw_reply call(const std::string& method,
                         std::span<const std::string_view> args,
                         std::span<const cbor::bulk_array> arrays,
                         const call_deadline& deadline, reply_sink* sink) = 0;
  virtual const std::string& node() const = 0;
  // The program is stopping: calls from now on fail with transport_error.
  virtual void close() = 0;
};

}  // namespace lp::detail
