#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <launchpad/detail/observe/exposition.hpp>
#include <launchpad/detail/serve/listener.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/serve/served_node.hpp>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/shared_memory.hpp>
#include <launchpad/error.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace lp::detail {

// Serves one node over HTTP (protocol v1, docs/protocol.md).
class http_server {
 public:
  // An empty secret serves everyone (an --lp_insecure launch). A request
  // body larger than max_body_bytes is refused with 413; `limits` bound
  // the time a request may take to arrive and the connections open at once
  // (listener.hpp). With a TLS context, it serves HTTPS only, to peers
  // that hold the launch's certificate.
  http_server(served_node& node, std::string secret, std::size_t max_body_bytes,
              server_limits limits = {}, std::shared_ptr<const tls_context> tls = nullptr)
      : node_(node),
        identity_(node.identity),
        secret_(std::move(secret)),
        listener_(limits) {
    listener_.set_tls(std::move(tls));
    configure(max_body_bytes);
  }
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;
  ~http_server() { stop(); }

  // Binds host:port (port 0: any free port), and a unix socket at
  // `socket_path` unless it is empty (the callers on this host take it:
  // docs/protocol.md, "On one host"), serves on a thread of its own, and
  // returns the URL once connections are accepted.
  std::string start(const std::string& host, int port,
                    const std::string& socket_path = {}) {
    if (!socket_path.empty() && !listener_.listen_locally(socket_path))
      throw bind_error("node '" + identity_.label +
                       "' cannot listen on the unix socket " + socket_path + ": " +
                       std::strerror(errno) +
                       "; launch with --lp_same_host=off to call it over TCP only");
    int bound = listener_.start(host, port);
    if (bound < 0)
      throw bind_error("node '" + identity_.label + "' cannot listen on " + host + ":" +
                       std::to_string(port) + ": " + std::strerror(errno));
    bound_.host = host;
    bound_.port = bound;
    if (!socket_path.empty()) {
      bound_.socket = socket_path;
      bound_.host_id = host_identity();
    }
    url_ = bound_.url(listener_.tls());
    return url_;
  }

  const std::string& url() const noexcept { return url_; }
  const address& bound() const noexcept { return bound_; }

  // From now on new calls get 503 "stopping"; calls already running finish,
  // and their replies are written (node_gate::drain).
  void drain() { node_.gate.drain(); }

  void stop() {
    if (!listener_.running()) return;
    drain();
    listener_.stop();
  }

 private:
  void configure(std::size_t max_body_bytes) {
    auto& routes = listener_.routes();
    // The errors the listener writes itself name this node.
    listener_.set_refusal_body([this](std::string_view code, const std::string& message) {
      return protocol::encode(protocol::error_body(code, message, identity_.label, ""),
                              protocol::format::json);
    });
    listener_.on_reply_written([this] {
      if (!reply_pending()) return;
      reply_pending() = false;
      node_.gate.written();
    });
    listener_.set_body_limit(max_body_bytes);
    routes.post_under(protocol::path::call, [this](const http_request& req,
                                                   http_reply& res) { call(req, res); });
    routes.get(protocol::path::describe, [this](const http_request& req,
                                                http_reply& res) {
      if (!authorized(req, res, "")) return;
      json body = describe_service(node_.instance.service(), node_.instance.methods());
      body["program"] = identity_.program;
      body["node"] = identity_.label;
      body["protocol"] = protocol::wire_version;
      respond(req, res, 200, body, protocol::format::json);
    });
    // What lp::stop() does, for tools outside the program (the Python
    // client's stop()): a node process passes it on to its launcher.
    routes.post(protocol::path::stop, [this](const http_request& req, http_reply& res) {
      if (!authorized(req, res, "")) return;
      node_.launch.request_stop();
      respond(req, res, 200, {{"status", protocol::health::stopping}},
              protocol::format::json);
    });
    routes.get(protocol::path::metrics, [this](const http_request& req, http_reply& res) {
      if (!authorized(req, res, "")) return;
      auto process = this_process_figures();
      auto shared = segment_pool::of_process().counts();
      process.shared_memory = {
          static_cast<double>(shared.bytes), static_cast<double>(shared.lent),
          static_cast<double>(shared.fallbacks), static_cast<double>(shared.given_away)};
      auto connections = listener_.open_connections();
      if (req.header("Accept").find(protocol::media::json) != std::string_view::npos)
        return res.set_content(
            metrics_json(node_.metrics, identity_.label, process, connections).dump(),
            protocol::media::json);
      res.set_content(
          prometheus_text(node_.metrics, identity_.label, process, connections),
          protocol::media::prometheus);
    });
    routes.get(protocol::path::health, [this](const http_request& req, http_reply& res) {
      bool serving = !node_.gate.draining();
      respond(
          req, res, serving ? 200 : 503,
          {{"status", serving ? protocol::health::serving : protocol::health::stopping}},
          protocol::format::json);
    });
    routes.otherwise([this](const http_request& req, http_reply& res) {
      respond(req, res, 404,
              protocol::error_body(
                  protocol::error::no_such_route,
                  "no route " + std::string(req.method()) + " " + std::string(req.path) +
                      "; call a method with POST " + protocol::path::call +
                      "<method>, see GET " + std::string(protocol::path::describe),
                  identity_.label, ""),
              protocol::format::json);
    });
  }

  // Every route but health needs the launch's secret as a bearer token.
  bool authorized(const http_request& req, http_reply& res, std::string_view method) {
    if (secret_.empty()) return true;
    auto problem = credential_problem(req.header("Authorization"), secret_);
    if (problem.empty()) return true;
    respond(req, res, 401,
            protocol::error_body(protocol::error::unauthenticated, problem,
                                 identity_.label, method),
            protocol::format::json);
    return false;
  }

  // Whether this thread's current request is a call whose reply is
  // unwritten: the listener writes a reply on the thread that ran its
  // handler, so the thread carries it from the call's handler to the
  // reply's end.
  static bool& reply_pending() {
    thread_local bool pending = false;
    return pending;
  }

  // The reply's format: what Accept asks for, else the request's own.
  static protocol::format reply_format(const http_request& req,
                                       protocol::format request_format) {
    auto accept = req.header("Accept");
    return accept.find(protocol::media::cbor) != std::string_view::npos
               ? protocol::format::cbor
           : accept.find(protocol::media::json) != std::string_view::npos
               ? protocol::format::json
               : request_format;
  }

  // A reply is written into this thread's reply, and a large one is sent
  // straight from it (and from the result's arrays it refers to), after the
  // handler returns and before the thread takes its next request.
  struct reply_tag {};

  static void respond(const http_request& req, http_reply& res, int status,
                      const json& body, protocol::format request_format) {
    auto format = reply_format(req, request_format);
    auto& reply = written_reply::of_this_thread<reply_tag>();
    reply.body.bytes() = protocol::encode(body, format);
    send(res, status, reply, format);
  }

  // Returns the body's size. The body is written from the thread's reply
  // (and the result's arrays it refers to), which stays as it is until the
  // listener has written it.
  static std::size_t send(http_reply& res, int status, written_reply& reply,
                          protocol::format format, segment_exchange* shared = nullptr) {
    res.status = status;
    res.content_type = protocol::content_type(format);
    res.body.clear();
    res.pieces.clear();
    std::size_t size = 0;
    auto pieces = reply.body.pieces();
    for (auto piece : pieces) size += piece.size();
    // To a caller on this host that reads shared memory, the result's
    // large arrays go in a segment (wire/shared_memory.hpp): copied there,
    // the result itself is no longer needed, nor kept (nothing of the
    // call's then holds the segments the call brought, which go back).
    thread_local std::string references;
    if (shared && format == protocol::format::cbor &&
        shared->pack(pieces, reply.body.arrays(), res.pieces, references)) {
      reply.kept.reset();
      return size;
    }
    res.pieces.assign(pieces.begin(), pieces.end());
    return size;
  }

  // Every call is counted, whatever its answer (respond() and send() set
  // the status).
  void call(const http_request& req, http_reply& res) {
    const std::string method(req.rest);
    call_timer timer(node_.metrics.calls_to(method), 0);
    answer_call(req, res, method, timer);
    timer.status = res.status;
  }

  void answer_call(const http_request& req, http_reply& res, const std::string& method,
                   call_timer& timer) {
    auto fail = [&](int status, std::string_view code, const std::string& message,
                    protocol::format format) {
      respond(req, res, status,
              protocol::error_body(code, message, identity_.label, method), format);
    };
    if (!authorized(req, res, method)) return;
    auto format = protocol::format_of(req.header("Content-Type"));
    if (!format)
      return fail(415, protocol::error::unsupported_media_type,
                  "Content-Type '" + std::string(req.header("Content-Type")) +
                      "' is not supported; send " + protocol::media::json + " or " +
                      protocol::media::cbor,
                  protocol::format::json);
    if (!node_.gate.enter(/*reply_to_write=*/true)) {
      auto [code, message] = refusal(node_);
      return fail(503, code, message, *format);
    }
    reply_pending() = true;
    struct leave {
      node_gate& gate;
      ~leave() { gate.left(); }
    } guard{node_.gate};

    node_scope scope(identity_, node_.launch, call_deadline_of(req));
    auto& reply = written_reply::of_this_thread<reply_tag>();
    auto replying = reply_format(req, *format);
    timer.request_bytes = req.body.size();
    int status;
    {
      // The body's large arrays may be in the segments the request brought.
      std::span<const cbor::segment_view> segments;
      if (req.shared) segments = req.shared->segments();
      for (const auto& segment : segments) timer.request_bytes += segment.size;
      cbor::segment_scope shared(segments);
      status = dispatch(node_.instance, identity_.label, method, *format, replying,
                        req.body, reply);
    }
    timer.reply_bytes = send(res, status, reply, replying, req.shared);
  }

  // The caller's deadline, from the time the request came, less the time
  // its reply needs to travel (lp::caller_deadline()); none (max) if it
  // sent none or one that is not a count of milliseconds.
  static std::chrono::steady_clock::time_point call_deadline_of(const http_request& req) {
    auto never = std::chrono::steady_clock::time_point::max();
    auto value = std::string(req.header(protocol::header::deadline));
    if (value.empty()) return never;
    char* end = nullptr;
    auto ms = std::strtoll(value.c_str(), &end, 10);
    // Past ten years, the wait is as good as unbounded (and adding it could overflow).
    if (*end != '\0' || ms < 0 || ms > 315'360'000'000LL) return never;
    auto for_the_reply = std::min(ms / 10, 100LL);
    return std::chrono::steady_clock::now() +
           std::chrono::milliseconds(ms - for_the_reply);
  }

  served_node& node_;
  const node_identity& identity_;
  const std::string secret_;
  address bound_;
  std::string url_;
  listener listener_;  // last: it stops before what its handlers use
};

}  // namespace lp::detail
