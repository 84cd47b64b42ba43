#pragma once

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <launchpad/detail/observe/exposition.hpp>
#include <launchpad/detail/serve/header_value.hpp>
#include <launchpad/detail/serve/listener.hpp>
#include <launchpad/detail/serve/secret.hpp>
#include <launchpad/detail/serve/served_node.hpp>
#include <launchpad/detail/wire/address.hpp>
#include <launchpad/detail/wire/buffers.hpp>
#include <launchpad/detail/wire/protocol.hpp>
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
      : node_(node), identity_(node.identity), secret_(std::move(secret)),
        max_body_bytes_(max_body_bytes), listener_(limits) {
    listener_.set_tls(std::move(tls));
    configure(max_body_bytes);
  }
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;
  ~http_server() { stop(); }

  // Binds host:port (port 0: any free port), serves on a thread of its own,
  // and returns the URL once connections are accepted.
  std::string start(const std::string& host, int port) {
    int bound = listener_.start(host, port);
    if (bound < 0)
      throw bind_error("node '" + identity_.label + "' cannot listen on " + host + ":" +
                                    std::to_string(port) + ": " + std::strerror(errno));
    bound_ = {host, bound};
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
    auto& server = listener_.server();
    // The 408 and 503 the listener writes itself name this node.
    listener_.set_refusal_body([this](std::string_view code, const std::string& message) {
      return protocol::encode(protocol::error_body(code, message, identity_.label, ""),
                              protocol::format::json);
    });
    listener_.on_reply_written([this] {
      if (!reply_pending()) return;
      reply_pending() = false;
      node_.gate.written();
    });
    server.set_keep_alive_max_count(std::size_t{1} << 30);
    server.set_keep_alive_timeout(protocol::keep_alive_seconds);
    listener_.set_body_limit(max_body_bytes);
    server.Post(R"(/lp/v1/call/([^/]*))",
                [this](const httplib::Request& req, httplib::Response& res,
                       const httplib::ContentReader& read) { call(req, res, read); });
    server.Get(protocol::describe_path,
                [this](const httplib::Request& req, httplib::Response& res) {
                  if (!authorized(req, res, "")) return;
                  json body = describe_service(node_.instance.service(), node_.instance.methods());
                  body["program"] = identity_.program;
                  body["node"] = identity_.label;
                  body["protocol"] = 1;
                  respond(req, res, 200, body, protocol::format::json);
                });
    // What lp::stop() does, for tools outside the program (the Python
    // client's stop()): a node process passes it on to its launcher.
    server.Post(protocol::stop_path, [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req, res, "")) return;
      node_.launch.request_stop();
      respond(req, res, 200, {{"status", "stopping"}}, protocol::format::json);
    });
    server.Get(protocol::metrics_path, [this](const httplib::Request& req,
                                              httplib::Response& res) {
      if (!authorized(req, res, "")) return;
      auto process = this_process_figures();
      auto connections = listener_.open_connections();
      if (header_value(req, "Accept").find(protocol::json_type) != std::string_view::npos)
        return res.set_content(
            metrics_json(node_.metrics, identity_.label, process, connections).dump(),
            protocol::json_type);
      res.set_content(
          prometheus_text(node_.metrics, identity_.label, process, connections),
          std::string(prometheus_type));
    });
    server.Get(protocol::health_path, [this](const httplib::Request& req, httplib::Response& res) {
      bool serving = !node_.gate.draining();
      respond(req, res, serving ? 200 : 503, {{"status", serving ? "serving" : "stopping"}},
            protocol::format::json);
    });
    // httplib calls this for every status >= 400; only its own bare errors
    // (unknown route, unreadable request) still need a body.
    server.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& req, httplib::Response& res) {
      bool answered = !res.body.empty() || res.content_length_ > 0;
      if (answered) return httplib::Server::HandlerResponse::Unhandled;
      auto code = res.status == 404   ? "no_such_route"
                  : res.status == 413 ? "payload_too_large"
                                      : "bad_request";
      auto message = res.status == 404
                         ? "no route " + req.method + " " + req.path +
                               "; call a method with POST /lp/v1/call/<method>, see GET " +
                               protocol::describe_path
                         : "the request could not be read (HTTP " + std::to_string(res.status) + ")";
      respond(req, res, res.status, protocol::error_body(code, message, identity_.label, ""),
            protocol::format::json);
      return httplib::Server::HandlerResponse::Handled;
    }));
  }

  // Every route but health needs the launch's secret as a bearer token.
  bool authorized(const httplib::Request& req, httplib::Response& res, const std::string& method) {
    if (secret_.empty()) return true;
    auto problem = credential_problem(header_value(req, "Authorization"), secret_);
    if (problem.empty()) return true;
    respond(req, res, 401,
            protocol::error_body("unauthenticated", problem, identity_.label, method),
            protocol::format::json);
    return false;
  }

  // Whether this thread's current request is a call whose reply is
  // unwritten: httplib's handlers see only the request, and a connection
  // keeps its server thread (listener.hpp, refusing()), so the thread
  // carries it from the call's handler to the connection's end.
  static bool& reply_pending() {
    thread_local bool pending = false;
    return pending;
  }

  // The reply's format: what Accept asks for, else the request's own.
  static protocol::format reply_format(const httplib::Request& req,
                                       protocol::format request_format) {
    auto accept = header_value(req, "Accept");
    return accept.find(protocol::cbor_type) != std::string_view::npos
               ? protocol::format::cbor
           : accept.find(protocol::json_type) != std::string_view::npos
               ? protocol::format::json
               : request_format;
  }

  // A reply is written into this thread's reply, and a large one is sent
  // straight from it (and from the result's arrays it refers to), after the
  // handler returns and before the thread takes its next request.
  struct reply_tag {};

  static void respond(const httplib::Request& req, httplib::Response& res, int status,
                      const json& body, protocol::format request_format) {
    auto format = reply_format(req, request_format);
    auto& reply = written_reply::of_this_thread<reply_tag>();
    reply.body.bytes() = protocol::encode(body, format);
    send(res, status, reply, format);
  }

  // Returns the body's size.
  static std::size_t send(httplib::Response& res, int status, written_reply& reply,
                          protocol::format format) {
    res.status = status;
    auto pieces = reply.body.pieces();  // valid while the reply is unchanged
    std::size_t size = 0;
    for (auto piece : pieces) size += piece.size();
    if (size <= streamed_body) {
      std::string whole;
      auto joined = reply.joined(whole);
      res.set_content(joined.data(), joined.size(), protocol::content_type(format));
      return size;
    }
    res.set_content_provider(size, protocol::content_type(format),
                             [pieces](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                               for (auto piece : pieces) {
                                 if (offset >= piece.size()) {
                                   offset -= piece.size();
                                   continue;
                                 }
                                 if (!sink.write(piece.data() + offset, piece.size() - offset))
                                   return false;
                                 offset = 0;
                               }
                               return true;
                             });
    return size;
  }

  // The request's body, read into this thread's request buffer; nothing if
  // it could not be read (httplib has set the status: 413 for a body over
  // the limit, 400 otherwise).
  std::optional<std::string_view> read_body(const httplib::Request& req,
                                            const httplib::ContentReader& read) {
    struct request_body {};
    auto declared = std::strtoull(
        std::string(header_value(req, "Content-Length")).c_str(), nullptr, 10);
    auto& body = thread_buffer<request_body>(
        static_cast<std::size_t>(std::min<unsigned long long>(declared, max_body_bytes_)));
    bool complete = read([&body](const char* data, std::size_t length) {
      body.append(data, length);
      return true;
    });
    if (!complete) return std::nullopt;
    return body;
  }

  // Every call is counted, whatever its answer (respond() and send() set
  // the status).
  void call(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    const std::string method = req.matches[1];
    call_timer timer(node_.metrics.calls_to(method), 0);
    answer_call(req, res, read, method, timer);
    timer.status = res.status;
  }

  void answer_call(const httplib::Request& req, httplib::Response& res,
                   const httplib::ContentReader& read, const std::string& method,
                   call_timer& timer) {
    // Read first, whatever the answer: a body left unread would be taken
    // for the connection's next request.
    auto body = read_body(req, read);
    if (!body) {
      bool too_large = res.status == 413;
      return respond(req, res, too_large ? 413 : 400,
                   protocol::error_body(too_large ? "payload_too_large" : "bad_request",
                                        too_large ? "the body is larger than this node accepts "
                                                    "(--lp_max_body_mb)"
                                                  : "the body could not be read",
                                        identity_.label, method),
                   protocol::format::json);
    }
    auto fail = [&](int status, std::string_view code, const std::string& message,
                    protocol::format format) {
      respond(req, res, status, protocol::error_body(code, message, identity_.label, method),
            format);
    };
    if (!authorized(req, res, method)) return;
    auto format = protocol::format_of(header_value(req, "Content-Type"));
    if (!format)
      return fail(415, "unsupported_media_type",
                  "Content-Type '" + std::string(header_value(req, "Content-Type")) +
                      "' is not supported; send application/json or application/cbor",
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
    timer.request_bytes = body->size();
    int status = dispatch(node_.instance, identity_.label, method, *format, replying, *body, reply);
    timer.reply_bytes = send(res, status, reply, replying);
  }

  // The caller's deadline, from the time the request came, less the time
  // its reply needs to travel (lp::caller_deadline()); none (max) if it
  // sent none or one that is not a count of milliseconds.
  static std::chrono::steady_clock::time_point call_deadline_of(const httplib::Request& req) {
    auto never = std::chrono::steady_clock::time_point::max();
    auto value = std::string(header_value(req, protocol::deadline_header));
    if (value.empty()) return never;
    char* end = nullptr;
    auto ms = std::strtoll(value.c_str(), &end, 10);
    // Past ten years, the wait is as good as unbounded (and adding it could overflow).
    if (*end != '\0' || ms < 0 || ms > 315'360'000'000LL) return never;
    auto for_the_reply = std::min(ms / 10, 100LL);
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms - for_the_reply);
  }

  served_node& node_;
  const node_identity& identity_;
  const std::string secret_;
  const std::size_t max_body_bytes_;
  address bound_;
  std::string url_;
  listener listener_;  // last: it stops before what its handlers use
};

}  // namespace lp::detail
