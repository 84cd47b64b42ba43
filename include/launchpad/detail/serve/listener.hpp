#pragma once

#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/util/thread_pool.hpp>
#include <string>
#include <thread>

namespace lp::detail {

// httplib's socket options, with buffers of socket_buffer_bytes.
inline void large_socket_buffers(socket_t socket) {
  httplib::default_socket_options(socket);
  ::setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &socket_buffer_bytes, sizeof socket_buffer_bytes);
  ::setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &socket_buffer_bytes, sizeof socket_buffer_bytes);
}

// cpp-httplib's own pool holds one thread per keep-alive connection for as
// long as the connection lives, so a fixed pool of 8 makes the 9th client
// wait for seconds; a node's server runs its connections on a thread_pool,
// which grows with them instead.
class growing_task_queue final : public httplib::TaskQueue {
 public:
  explicit growing_task_queue(std::size_t max_threads) : pool_(max_threads) {}
  void enqueue(std::function<void()> job) override { pool_.enqueue(std::move(job)); }
  void shutdown() override { pool_.shutdown(); }

 private:
  thread_pool pool_;
};

// An httplib server set up the way every server of a launch needs it, and
// run on a thread of its own.
class listener {
 public:
  explicit listener(std::size_t max_threads) {
    server_.new_task_queue = [max_threads] { return new growing_task_queue(max_threads); };
    server_.set_tcp_nodelay(true);
    // Accepted connections inherit the listening socket's buffer sizes.
    server_.set_socket_options(large_socket_buffers);
  }
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  ~listener() { stop(); }

  httplib::Server& server() { return server_; }

  // Binds host:port (port 0: any free port) and serves; returns the port,
  // or -1 if it cannot bind. Connections are accepted once it returns.
  int start(const std::string& host, int port) {
    int bound = port;
    if (port == 0) bound = server_.bind_to_any_port(host);
    else if (!server_.bind_to_port(host, port)) bound = -1;
    if (bound < 0) return -1;
    // Debian's libcpp-httplib was built with a listen backlog of 5, so a
    // burst of new connections (64 node processes starting) would wait for
    // SYN retries; widen it.
    server_.widen_backlog();
    // The socket listens already: a peer's connection waits in the backlog
    // until the thread accepts it.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    return bound;
  }

  // Stops accepting and waits for the connection threads.
  void stop() {
    if (!thread_.joinable()) return;
    server_.close_listening_socket();
    thread_.join();
  }

  bool running() const { return thread_.joinable(); }

 private:
  struct server_with_backlog : httplib::Server {
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
  };

  server_with_backlog server_;
  std::thread thread_;
};

}  // namespace lp::detail
