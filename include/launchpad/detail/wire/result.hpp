#pragma once

// A call's result on the wire: {"result": value} in a reply with status 200,
// {"error": {...}} in any other (docs/protocol.md). The node writes the first
// with write_result; the client turns any reply into the result or the
// lp::remote_error it stands for with read_result.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/config.hpp>
#include <launchpad/detail/wire/cbor_decode.hpp>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/json_encode.hpp>
#include <launchpad/detail/wire/kind.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/reply_sink.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace lp::detail {

// A refusal of the node's: an HTTP status and a stable error code on the
// wire (docs/protocol.md).
struct call_failure : std::runtime_error {
  call_failure(int status, std::string code, const std::string& message)
      : std::runtime_error(message), status(status), code(std::move(code)) {}
  int status;
  std::string code;
};

// A reply as it came: its status and its body in `format`. The body is the
// calling thread's buffer, valid until the thread's next call.
struct raw_reply {
  int status = 0;
  protocol::format format = protocol::format::cbor;
  std::string_view body;
  bool placed = false;  // the result went to the call's reply_sink
  // The shared-memory segments the reply brought (wire/shared_memory.hpp),
  // which its body's large arrays may refer to: valid as the body is.
  std::span<const cbor::segment_view> segments{};
};

// Whether every floating-point number in `value` is finite.
LP_API bool finite_numbers(const json& value);

// A reply as a node writes it. The body may refer to the large arrays of
// the result rather than copy them, so the result is kept with it until the
// reply has been sent.
struct written_reply {
  cbor::gathered body;
  std::shared_ptr<const void> kept;

  // This thread's, emptied, one per `Use`: the result it kept is freed
  // once the next call on the thread needs it.
  template <class Use>
  static written_reply& of_this_thread() {
    thread_local written_reply reply;
    reply.clear();
    return reply;
  }

  void clear() {
    body.clear();
    kept.reset();
  }

  // The body in one piece, copied into `whole` only when it is in several.
  std::string_view joined(std::string& whole) {
    auto pieces = body.pieces();
    if (pieces.size() == 1) return pieces[0];
    whole.clear();
    for (auto piece : pieces) whole += piece;
    return whole;
  }
};

// How a CBOR reply with a result starts: a map of one entry, "result".
inline constexpr std::string_view result_prefix = "\xa1\x66result";

// Turns the CBOR reply in `out` into JSON: the result read back, typed
// arrays as arrays of numbers. The same for every result type.
LP_API void reply_to_json(written_reply& out);

// The reply of a void method.
LP_API void write_void_result(written_reply& out, protocol::format f);

// A result kept with the reply that refers to its arrays: a large vector
// of numbers goes on to the next call's arguments (util/spare_vectors.hpp)
// once the reply is done with it.
template <class R>
std::shared_ptr<const R> keep_for_reply(R&& value) {
  if constexpr (is_std_vector<R>) {
    using T = typename R::value_type;
    if constexpr (packable<T> && std::is_same_v<R, std::vector<T>>) {
      if (spare::vectors<T>::worth(value.capacity()))
        return std::shared_ptr<const R>(new R(std::move(value)), [](const R* done) {
          spare::vectors<T>::put(std::move(*const_cast<R*>(done)));
          delete done;
        });
    }
  }
  return std::make_shared<const R>(std::move(value));
}

// Writes over `out` the reply that carries `value`, in format f. The reply
// is written as CBOR from where the value is kept, so the body may refer to
// its arrays; a JSON reply is made from that (reply_to_json).
template <class R>
void write_result(written_reply& out, R value, protocol::format f) {
  if constexpr (std::is_null_pointer_v<R>) {
    write_void_result(out, f);
  } else {
    out.clear();
    auto kept = keep_for_reply<R>(std::move(value));
    out.body.bytes() += result_prefix;
    cbor::write(out.body, *kept);
    if (f == protocol::format::json)
      reply_to_json(out);
    else if (out.body.borrows())
      out.kept = std::move(kept);
  }
}

// Writes an error reply over `out`.
LP_API void write_error(written_reply& out, std::string_view code,
                        const std::string& message, std::string_view node,
                        std::string_view method, protocol::format f);

// The result in a parsed reply, or the lp::remote_error it stands for.
LP_API json result_of(const std::string& node, const std::string& method, int status,
                      json&& reply);

// The result in any reply, or the error it stands for (an unreadable reply
// is an lp::remote_error).
LP_API json result_in(const std::string& node, const std::string& method,
                      const raw_reply& reply);

// Throws the error the reply stands for, if it stands for one.
LP_API void check_reply(const std::string& node, const std::string& method,
                        const raw_reply& reply);

// The same, in CBOR: what a typed read takes, whatever the reply's format.
LP_API std::string result_cbor(const std::string& node, const std::string& method,
                               const raw_reply& reply);

// A result that does not fit its type, as the caller hears of it.
[[noreturn]] LP_API void misfit_result(const std::string& node, const std::string& method,
                                       const decode_error& e);

// The result a reply carries as an R (void: none), or the error it stands
// for: lp::remote_error for an error reply or an unreadable one,
// lp::transport_error for a result that does not fit R.
template <class R>
R read_result(const std::string& node, const std::string& method,
              const raw_reply& reply) {
  cbor::segment_scope shared(reply.segments);
  if constexpr (std::is_void_v<R>) {
    check_reply(node, method, reply);
  } else {
    // What a node writes: {"result": value}, read straight into an R.
    if (reply.status == 200 && reply.format == protocol::format::cbor &&
        reply.body.substr(0, result_prefix.size()) == result_prefix) {
      std::size_t at = result_prefix.size();
      try {
        R value = cbor::read_as<R>(reply.body, at, protocol::max_depth);
        if (at == reply.body.size()) return value;
      } catch (const decode_error& e) {
        misfit_result(node, method, e);
      } catch (const std::exception&) {
        // Unreadable: said below, as for any reply.
      }
    }
    try {
      auto bytes = result_cbor(node, method, reply);
      std::size_t at = 0;
      return cbor::read_as<R>(bytes, at, cbor::unbounded);
    } catch (const decode_error& e) {
      misfit_result(node, method, e);
    }
  }
}

// A result of type std::vector<T> of numbers, read by the connection
// straight into the vector: a node's reply {"result": typed array} of T in
// this machine's byte order. Any other reply (an error, JSON, another
// element type) is read as usual, and read_result decides.
template <class R>
class placed_vector;

template <packable T>
class placed_vector<std::vector<T>> final : public reply_sink {
 public:
  std::vector<T> value;

  char* place(int status, std::string_view content_type, std::size_t body_size,
              std::string_view lead) override {
    if (status != 200 || protocol::format_of(content_type) != protocol::format::cbor ||
        !lead.starts_with(result_prefix))
      return nullptr;
    auto at = result_prefix.size();
    auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(lead[i]); };
    // The tag (one byte after 0xd8: typed-array tags are 64-87), then the
    // byte string's head with a length of 1, 2, 4 or 8 bytes (a body this
    // large needs one).
    if (lead.size() < at + 3 || byte(at) != 0xd8 ||
        byte(at + 1) != typed_array::native_tag<T>)
      return nullptr;
    auto initial = byte(at + 2);
    if (initial < 0x58 || initial > 0x5b) return nullptr;
    std::size_t length_bytes = std::size_t{1} << (initial - 0x58);
    std::size_t start = at + 3 + length_bytes;
    if (start > lead.size()) return nullptr;
    std::uint64_t length = 0;
    for (std::size_t i = at + 3; i < start; ++i) length = length << 8 | byte(i);
    // The byte string ends the body, and holds whole elements.
    if (length != body_size - start || length % sizeof(T) != 0) return nullptr;
    value.resize(length / sizeof(T));
    auto* storage = reinterpret_cast<char*>(value.data());
    std::memcpy(storage, lead.data() + start, lead.size() - start);
    return storage + (lead.size() - start);
  }
};

template <class R>
inline constexpr bool placeable_result = false;
template <packable T>
inline constexpr bool placeable_result<std::vector<T>> = true;

}  // namespace lp::detail
