#pragma once

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <launchpad/detail/node.hpp>
#include <launchpad/detail/protocol.hpp>
#include <launchpad/detail/runtime.hpp>
#include <launchpad/detail/thread_pool.hpp>
#include <launchpad/error.hpp>
#include <mutex>
#include <string>
#include <thread>

namespace lp::detail {

// Serves one node over HTTP (protocol v1, docs/protocol.md).
class http_server {
 public:
  // Seconds an idle keep-alive connection stays open. Clients drop pooled
  // connections well before this (see http_channel), and a stopping server
  // waits at most this long for connections its clients forgot to close.
  static constexpr int keep_alive_seconds = 2;
  // A larger request body is refused with 413 before it is read.
  static constexpr std::size_t max_body_bytes = std::size_t{256} << 20;

  http_server(node_instance& node, const node_identity& identity, launch_state& launch)
      : node_(node), identity_(identity), launch_(launch) {
    configure();
  }
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;
  ~http_server() { stop(); }

  // Binds host:port (port 0: any free port), serves on a thread of its own,
  // and returns the URL once connections are accepted.
  std::string start(const std::string& host, int port) {
    int bound = port == 0 ? server_.bind_to_any_port(host) : port;
    if (bound < 0 || (port != 0 && !server_.bind_to_port(host, port)))
      throw error("bind_error", "node '" + identity_.label + "' cannot listen on " + host + ":" +
                                    std::to_string(port) + ": " + std::strerror(errno));
    // Debian's libcpp-httplib was built with a listen backlog of 5, so a
    // burst of new connections would wait for SYN retries; widen it.
    server_.widen_backlog();
    url_ = "http://" + host + ":" + std::to_string(bound);
    listener_ = std::thread([this] { server_.listen_after_bind(); });
    // httplib's stop() does nothing until the listener runs, so wait for it.
    for (int i = 0; i < 100000 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    return url_;
  }

  const std::string& url() const noexcept { return url_; }

  // From now on new calls get 503 "stopping"; calls already running finish.
  void drain() {
    std::unique_lock lock(mutex_);
    draining_ = true;
    idle_.wait(lock, [&] { return in_flight_ == 0; });
  }

  void stop() {
    if (listener_.joinable()) {
      drain();
      server_.stop();
      listener_.join();
    }
  }

 private:
  struct server : httplib::Server {
    void widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }
  };

  void configure() {
    server_.new_task_queue = [] { return new thread_pool(4096); };
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_max_count(std::size_t{1} << 30);
    server_.set_keep_alive_timeout(keep_alive_seconds);
    server_.set_payload_max_length(max_body_bytes);
    server_.Post(R"(/lp/v1/call/([^/]*))",
                 [this](const httplib::Request& req, httplib::Response& res) { call(req, res); });
    server_.Get(protocol::describe_path,
                [this](const httplib::Request& req, httplib::Response& res) {
                  json body = node_.describe();
                  body["program"] = identity_.program;
                  body["node"] = identity_.label;
                  body["protocol"] = 1;
                  reply(req, res, 200, body, protocol::format::json);
                });
    server_.Get(protocol::health_path, [this](const httplib::Request& req, httplib::Response& res) {
      bool serving = !draining();
      reply(req, res, serving ? 200 : 503, {{"status", serving ? "serving" : "stopping"}},
            protocol::format::json);
    });
    // httplib calls this for every status >= 400; only its own bare errors
    // (unknown route, unreadable request) still need a body.
    server_.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      auto code = res.status == 404   ? "no_such_route"
                  : res.status == 413 ? "payload_too_large"
                                      : "bad_request";
      auto message = res.status == 404
                         ? "no route " + req.method + " " + req.path +
                               "; call a method with POST /lp/v1/call/<method>, see GET " +
                               protocol::describe_path
                         : "the request could not be read (HTTP " + std::to_string(res.status) + ")";
      reply(req, res, res.status, protocol::error_body(code, message, identity_.label, ""),
            protocol::format::json);
      return httplib::Server::HandlerResponse::Handled;
    }));
  }

  bool draining() {
    std::lock_guard lock(mutex_);
    return draining_;
  }

  // The reply's format: what Accept asks for, else the request's own.
  static void reply(const httplib::Request& req, httplib::Response& res, int status,
                    const json& body, protocol::format request_format) {
    auto accept = req.get_header_value("Accept");
    auto format = accept.find(protocol::cbor_type) != std::string::npos   ? protocol::format::cbor
                  : accept.find(protocol::json_type) != std::string::npos ? protocol::format::json
                                                                          : request_format;
    res.status = status;
    res.set_content(protocol::encode(body, format), protocol::content_type(format));
  }

  void call(const httplib::Request& req, httplib::Response& res) {
    const std::string method = req.matches[1];
    auto fail = [&](int status, std::string_view code, const std::string& message,
                    protocol::format format) {
      reply(req, res, status, protocol::error_body(code, message, identity_.label, method),
            format);
    };
    auto format = protocol::format_of(req.get_header_value("Content-Type"));
    if (!format)
      return fail(415, "unsupported_media_type",
                  "Content-Type '" + req.get_header_value("Content-Type") +
                      "' is not supported; send application/json or application/cbor",
                  protocol::format::json);
    {
      std::lock_guard lock(mutex_);
      if (draining_)
        return fail(503, "stopping", "node '" + identity_.label + "' is stopping", *format);
      ++in_flight_;
    }
    struct done {
      http_server& self;
      ~done() {
        std::lock_guard lock(self.mutex_);
        if (--self.in_flight_ == 0) self.idle_.notify_all();
      }
    } guard{*this};

    json args;
    try {
      args = protocol::decode(req.body, *format);
    } catch (const json::exception& e) {
      return fail(400, "bad_request",
                  std::string("the body is not valid ") +
                      (*format == protocol::format::cbor ? "CBOR" : "JSON") + ": " + e.what(),
                  *format);
    }
    if (!args.is_array())
      return fail(400, "bad_request",
                  std::string("the body must be an array of the positional arguments, got ") +
                      args.type_name(),
                  *format);
    try {
      node_scope scope(identity_, launch_);
      json result = node_.call(method, args);
      reply(req, res, 200, {{"result", std::move(result)}}, *format);
    } catch (const call_failure& e) {
      fail(e.status, e.code, e.what(), *format);
    } catch (const std::exception& e) {
      fail(500, "remote_exception", e.what(), *format);
    } catch (...) {
      fail(500, "remote_exception", "an exception not derived from std::exception", *format);
    }
  }

  node_instance& node_;
  const node_identity& identity_;
  launch_state& launch_;
  server server_;
  std::thread listener_;
  std::string url_;
  std::mutex mutex_;
  std::condition_variable idle_;
  int in_flight_ = 0;
  bool draining_ = false;
};

}  // namespace lp::detail
