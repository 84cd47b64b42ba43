#pragma once

// Everything the listener takes from cpp-httplib's server beyond its
// documented API, in one place. The protections of listener.hpp (a deadline
// over a whole request, a minimum body rate, the connection cap with its
// quick 503, threads that retire) need httplib's keep-alive loop over a
// stream of ours, and httplib offers no hook for that but the virtual
// process_and_close_socket and the protected process_request and members
// used below. Where these differ between releases, the difference is found
// by what compiles, not guessed from the version: CI builds and tests both
// shapes, 0.11.4 (Debian 12) and 0.18.7 (Debian 13), and meson.build and
// CMakeLists.txt warn at configure time about any release outside them.

#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

namespace lp::detail {

// CPPHTTPLIB_VERSION ("0.18.7") as major * 10000 + minor * 100 + patch.
constexpr long version_number(const char* text) {
  long parts[3] = {0, 0, 0};
  for (int part = 0; *text && part < 3; ++text) {
    if (*text == '.') ++part;
    else if (*text >= '0' && *text <= '9') parts[part] = parts[part] * 10 + (*text - '0');
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}
inline constexpr long httplib_version = version_number(CPPHTTPLIB_VERSION);
static_assert(httplib_version >= 1100,
              "launchpad needs cpp-httplib 0.11 or later (Debian 12 has 0.11.4, Debian 13 "
              "0.18.7): install a newer libcpp-httplib-dev");

// TaskQueue::enqueue returned nothing before 0.15; since then it says
// whether it took the job (if not, httplib closes the socket itself).
using enqueue_result =
    decltype(std::declval<httplib::TaskQueue&>().enqueue(std::function<void()>{}));

class httplib_server : public httplib::Server {
 public:
  // Debian's libcpp-httplib is built with a listen backlog of 5, so a
  // burst of new connections (64 node processes starting) would wait for
  // SYN retries.
  void widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }

  // What httplib's stop() does, but also before its accept loop has
  // started (where stop() does nothing, and the loop would then run
  // forever): the loop ends when it finds the socket gone.
  void close_listening_socket() {
    socket_t socket = svr_sock_.exchange(INVALID_SOCKET);
    if (socket == INVALID_SOCKET) return;
    ::shutdown(socket, SHUT_RDWR);
    ::close(socket);
  }

 protected:
  // The settings httplib's own keep-alive loop would use, as set through
  // its documented setters.
  struct loop_settings {
    std::chrono::milliseconds read_timeout, write_timeout;
    std::chrono::seconds idle;  // between requests (set_keep_alive_timeout)
    std::size_t max_requests;   // on one connection (set_keep_alive_max_count)
  };
  loop_settings settings() const {
    using std::chrono::duration_cast, std::chrono::milliseconds, std::chrono::seconds,
        std::chrono::microseconds;
    return {duration_cast<milliseconds>(seconds(read_timeout_sec_) +
                                        microseconds(read_timeout_usec_)),
            duration_cast<milliseconds>(seconds(write_timeout_sec_) +
                                        microseconds(write_timeout_usec_)),
            seconds(keep_alive_timeout_sec_), keep_alive_max_count_};
  }

  bool listening() const { return svr_sock_ != INVALID_SOCKET; }

  // Reads, routes and answers one request. In 0.11 process_request reads
  // the peer's address from the stream; 0.18 takes it as arguments. (A
  // template, so that only the shape that compiles is used.)
  template <class Stream>
  bool serve_one(Stream& stream, bool last, bool& closed) {
    if constexpr (requires { this->process_request(stream, last, closed, nullptr); }) {
      return this->process_request(stream, last, closed, nullptr);
    } else {
      std::string remote_ip, local_ip;
      int remote_port = 0, local_port = 0;
      stream.get_remote_ip_and_port(remote_ip, remote_port);
      stream.get_local_ip_and_port(local_ip, local_port);
      return this->process_request(stream, remote_ip, remote_port, local_ip, local_port, last,
                                   closed, nullptr);
    }
  }

  // httplib's accepting thread hands each accepted socket here, through
  // the task queue; the server closes it.
  virtual bool serve_connection(socket_t socket) = 0;

 private:
  bool process_and_close_socket(socket_t socket) final { return serve_connection(socket); }
};

}  // namespace lp::detail
