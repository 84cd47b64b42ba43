#pragma once

// What a server's handlers see of a request and make of its reply, and the
// table that routes one to a handler: the server side of HTTP/1.1 without
// cpp-httplib (listener.hpp reads and writes the bytes).

#include <cstddef>
#include <functional>
#include <launchpad/detail/wire/http1.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

class segment_exchange;

// A request, as views into the connection's buffers: valid during its
// handler only.
struct http_request {
  const http1::request_head& head;
  std::string_view path;  // percent-decoded, without the query
  std::string_view body;
  // What follows the prefix of a route by prefix ("add" of
  // "/lp/v1/call/add"); empty for a route by path.
  std::string_view rest;
  // On a unix socket, its connection's shared memory
  // (wire/shared_memory.hpp): the segments the body's arrays may refer
  // to, and where the reply's may go. Null over TCP.
  segment_exchange* shared = nullptr;

  std::string_view method() const { return head.method; }
  // The first header of this name (without case), or "".
  std::string_view header(std::string_view name) const { return head.field_value(name); }
};

// A reply: a status, a body with its type, and the headers a handler adds.
// The body is `body`, or, if `pieces` is not empty, the pieces in order:
// views the handler keeps valid until the reply is written (a node's reply
// buffers, which live as long as its thread).
struct http_reply {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::string_view> pieces;
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;  // the connection ends after this reply

  // Ready for the next request, keeping what it has allocated.
  void reset() {
    status = 200;
    content_type.clear();
    body.clear();
    pieces.clear();
    headers.clear();
    close = false;
  }
  void set_content(std::string content, std::string_view type) {
    body = std::move(content);
    content_type = type;
    pieces.clear();
  }
  void set_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

using http_handler = std::function<void(const http_request&, http_reply&)>;

// The reason phrase of a status this library answers with.
constexpr std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

// Routes by method and path, or by method and a path's prefix
// ("/lp/v1/call/" and a rest without '/', empty too). A HEAD is served as
// its GET, without the body. What no route takes goes to `otherwise`, if
// set.
class http_routes {
 public:
  void get(std::string path, http_handler handler) {
    add("GET", std::move(path), false, std::move(handler));
  }
  void post(std::string path, http_handler handler) {
    add("POST", std::move(path), false, std::move(handler));
  }
  void post_under(std::string prefix, http_handler handler) {
    add("POST", std::move(prefix), true, std::move(handler));
  }
  void otherwise(http_handler handler) { otherwise_ = std::move(handler); }

  // The handler for a request's method and path, and what follows the
  // prefix of a route by prefix; null if none, not even `otherwise`.
  std::pair<const http_handler*, std::string_view> find(std::string_view method,
                                                        std::string_view path) const {
    if (method == "HEAD") method = "GET";
    for (const auto& r : routes_) {
      if (method != r.method) continue;
      if (!r.prefix && path == r.path) return {&r.handler, {}};
      if (r.prefix && path.starts_with(r.path)) {
        auto rest = path.substr(r.path.size());
        if (rest.find('/') == std::string_view::npos) return {&r.handler, rest};
      }
    }
    return {otherwise_ ? &otherwise_ : nullptr, {}};
  }

 private:
  struct route {
    std::string method, path;
    bool prefix;
    http_handler handler;
  };
  void add(std::string method, std::string path, bool prefix, http_handler handler) {
    routes_.push_back({std::move(method), std::move(path), prefix, std::move(handler)});
  }
  std::vector<route> routes_;
  http_handler otherwise_;
};

}  // namespace lp::detail
