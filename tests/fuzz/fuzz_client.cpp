// libFuzzer target on the client's side of a call: the HTTP response parser
// (lp::detail::http_connection, reading a reply from a socket) and the reply
// decoding (lp::detail::read_result: typed results in JSON and CBOR, and the
// error replies of docs/protocol.md).
//
// An input is
//
//   <mode byte> <rest>
//
// Mode byte, low bit 0: HTTP. <rest> is what the "node" sends back on the
// connection, then it closes its side. The connection posts a call, as
// http_channel does, and reads the response from a socketpair; bits 1-2 pick
// the largest body it accepts (1 MiB, 16 bytes, 0, 4 KiB). A response that
// parses goes on to the reply decoding, with the format its Content-Type
// names, as http_channel would pass it on.
//
// Mode byte, low bit 1: a reply. Bit 1 picks the body's format (0 JSON,
// 1 CBOR); the next byte picks the status (statuses[] below); the rest is
// the body.
//
// For ANY input, and traps (a crash for libFuzzer) otherwise:
//
// - post() returns a response or throws http_connection::failure; the body
//   it reports fits both the buffer and the limit;
// - read_result<R>, for every R of decode_all below, returns an R or throws
//   lp::remote_error, lp::transport_error or lp::stopping, nothing else;
// - a reply whose status is not 200 never gives a result;
// - an R read from a reply (JSON or CBOR), written back as a CBOR reply
//   (write_result) and read again, writes the same bytes the second time
//   (or the same values, for an unordered map's entries in another order):
//   reading and writing agree.
//
// Build and run: see tests/fuzz/README.md.

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/hana/define_struct.hpp>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <launchpad/detail/call/http_connection.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/error.hpp>
// Built from the headers alone (tests/fuzz/meson.build): the compiled part
// the headers above declare comes, inline, with launch.hpp.
#include <launchpad/launch.hpp>
#include <launchpad/tensor.hpp>
#include <launchpad/wire.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "fuzz_types.hpp"

namespace {

using lp::json;
using lp::detail::http_connection;
namespace protocol = lp::detail::protocol;

bool verbose() {
  static const bool on = std::getenv("LP_FUZZ_VERBOSE") != nullptr;
  return on;
}

[[noreturn]] void violated(const char* what, const char* type = "") {
  if (verbose())
    std::fprintf(stderr, "lp fuzz_client: invariant violated: %s %s\n", what, type);
  __builtin_trap();
}

#define LP_FUZZ_CHECK(condition, type)            \
  do {                                            \
    if (!(condition)) violated(#condition, type); \
  } while (0)

constexpr int statuses[] = {200, 400, 404, 413, 415, 500, 503, 401, 204, 302, 999, 100};

// What read_result<R> of a reply did.
enum class outcome { value, remote_error, transport_error, stopping };

template <class R>
outcome decode_as(const lp::detail::raw_reply& reply, const char* type) {
  try {
    if constexpr (std::is_void_v<R>) {
      lp::detail::read_result<void>("fuzz", "m", reply);
    } else {
      R value = lp::detail::read_result<R>("fuzz", "m", reply);
      {
        // Written back and read again, the value writes the same bytes.
        lp::detail::written_reply first, second;
        lp::detail::write_result<R>(first, value, protocol::format::cbor);
        std::string whole_first, whole_second;
        std::string_view bytes = first.joined(whole_first);
        R again;
        try {
          again = lp::detail::read_result<R>("fuzz", "m",
                                             {200, protocol::format::cbor, bytes});
        } catch (const std::exception& e) {
          if (verbose())
            std::fprintf(stderr, "lp fuzz_client: rereading: %s\n", e.what());
          violated("a value written back reads again", type);
        }
        lp::detail::write_result<R>(second, std::move(again), protocol::format::cbor);
        std::string_view again_bytes = second.joined(whole_second);
        // An unordered map may come back in another order: then the values
        // must be the same (json objects compare whatever the order).
        if (again_bytes != bytes) {
          auto text = [](std::string_view b) {
            return protocol::decode(b, protocol::format::cbor)
                .dump(-1, ' ', false, json::error_handler_t::replace);
          };
          LP_FUZZ_CHECK(text(again_bytes) == text(bytes), type);
        }
      }
    }
  } catch (const lp::stopping&) {
    return outcome::stopping;
  } catch (const lp::transport_error&) {
    return outcome::transport_error;
  } catch (const lp::remote_error& e) {
    LP_FUZZ_CHECK(!e.code().empty(), type);
    return outcome::remote_error;
  } catch (const std::exception& e) {
    if (verbose()) std::fprintf(stderr, "lp fuzz_client: %s threw: %s\n", type, e.what());
    violated("read_result throws only lp errors", type);
  }
  // Only a 200 carries a result.
  LP_FUZZ_CHECK(reply.status == 200, type);
  return outcome::value;
}

void decode_all(const lp::detail::raw_reply& reply) {
  decode_as<void>(reply, "void");
  decode_as<long>(reply, "long");
  decode_as<std::uint8_t>(reply, "uint8_t");
  decode_as<short>(reply, "short");
  decode_as<std::uint64_t>(reply, "uint64_t");
  decode_as<double>(reply, "double");
  decode_as<float>(reply, "float");
  decode_as<bool>(reply, "bool");
  decode_as<std::string>(reply, "string");
  decode_as<std::vector<int>>(reply, "vector<int>");
  decode_as<std::vector<float>>(reply, "vector<float>");
  decode_as<std::vector<double>>(reply, "vector<double>");
  decode_as<std::vector<std::string>>(reply, "vector<string>");
  decode_as<std::map<std::string, int>>(reply, "map<string,int>");
  decode_as<std::unordered_map<std::string, double>>(reply,
                                                     "unordered_map<string,double>");
  decode_as<std::set<int>>(reply, "set<int>");
  decode_as<std::optional<int>>(reply, "optional<int>");
  decode_as<std::array<float, 3>>(reply, "array<float,3>");
  decode_as<std::tuple<int, std::string>>(reply, "tuple<int,string>");
  decode_as<lp::tensor<std::int16_t>>(reply, "tensor<int16_t>");
  decode_as<lp::tensor<double>>(reply, "tensor<double>");
  decode_as<fz::Point>(reply, "Point");
  decode_as<fz::Box>(reply, "Box");
  decode_as<fz::Color>(reply, "Color");
  decode_as<json>(reply, "json");
}

// The response parser: `response` comes from the other end of a socketpair,
// which then closes its side for writing.
void fuzz_http(std::uint8_t mode, std::string_view response) {
  static constexpr std::size_t limits[] = {std::size_t{1} << 20, 16, 0, 4096};
  const std::size_t max_body = limits[(mode >> 1) & 3];
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
    std::perror("socketpair");
    std::abort();
  }
  auto connection = http_connection::adopt(fds[0], "fuzz-peer");
  int node = fds[1];
  int big = 4 << 20;
  ::setsockopt(node, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  // What does not fit the socket's buffer is left out (not blocking here):
  // the same input is cut at the same place every time.
  for (std::size_t sent = 0; sent < response.size();) {
    ssize_t n =
        ::send(node, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(node, SHUT_WR);

  thread_local std::string body;
  std::string_view request = "\x81\x01";
  auto deadline = http_connection::clock::now() + std::chrono::seconds(5);
  http_connection::response r;
  try {
    r = connection->post("/lp/v1/call/m",
                         "Content-Type: application/cbor\r\nAccept: application/cbor\r\n",
                         request, deadline, body, max_body);
  } catch (const http_connection::failure& f) {
    LP_FUZZ_CHECK(!connection->reusable(), "http");
    // The socket gives EOF when the input ends: no input may make the
    // parser wait for its deadline.
    LP_FUZZ_CHECK(f.kind != http_connection::failure::timeout, "http");
    ::close(node);
    return;
  } catch (const std::exception& e) {
    if (verbose()) std::fprintf(stderr, "lp fuzz_client: post threw: %s\n", e.what());
    violated("post throws only http_connection::failure", "http");
  }
  ::close(node);
  LP_FUZZ_CHECK(r.status >= 200 && r.status <= 999, "http");
  LP_FUZZ_CHECK(r.body_size <= max_body, "http");
  LP_FUZZ_CHECK(r.body_size <= body.size(), "http");
  auto format = protocol::format_of(r.content_type);
  if (!format) return;  // http_channel refuses it as unreadable
  decode_all({r.status, *format, std::string_view(body.data(), r.body_size)});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::uint8_t mode = data[0];
  if ((mode & 1) == 0) {
    fuzz_http(mode, rest);
    return 0;
  }
  if (rest.empty()) return 0;
  auto format = (mode & 2) ? protocol::format::cbor : protocol::format::json;
  int status = statuses[static_cast<std::uint8_t>(rest[0]) % std::size(statuses)];
  decode_all({status, format, rest.substr(1)});
  return 0;
}
