#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace lp::detail {

// Where a node serves, as nodes publish it and callers dial it. An IPv6
// host goes in brackets in its URL (RFC 3986), which other tools expect.
// A node that also serves on a unix socket (wire/local_socket.hpp) gives
// its path and the identity of its host: a caller on that host
// (host_identity()) calls it there, any other over host:port.
struct address {
  std::string host;
  int port = 0;
  // (Initialized, so that address{host, port} says all there is to say.)
  std::string socket{};   // empty: none
  std::string host_id{};  // host_identity() of the node's process, with a socket
  // https:// where the launch speaks TLS.
  std::string url(bool tls = false) const {
    bool v6 = host.find(':') != std::string::npos;
    return (tls ? "https://" : "http://") + (v6 ? "[" + host + "]" : host) + ":" +
           std::to_string(port);
  }
  bool operator==(const address&) const = default;
};

// The host and port of "http://host:port" (or https://), with or without a path after
// them; nothing if `url` is not of that form. An IPv6 host may stand in
// brackets, as RFC 3986 and address::url() write it, or bare: the port is
// what follows the last colon.
inline std::optional<address> address_of_url(std::string_view url) {
  if (url.starts_with("http://"))
    url.remove_prefix(7);
  else if (url.starts_with("https://"))
    url.remove_prefix(8);
  else
    return std::nullopt;
  url = url.substr(0, url.find('/'));
  auto colon = url.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto host = url.substr(0, colon);
  auto port_text = url.substr(colon + 1);
  if (host.starts_with('[') != host.ends_with(']')) return std::nullopt;
  if (host.starts_with('[')) host = host.substr(1, host.size() - 2);
  int port = 0;
  auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (host.empty() || error != std::errc() ||
      end != port_text.data() + port_text.size() || port < 1 || port > 65535)
    return std::nullopt;
  return address{std::string(host), port};
}

}  // namespace lp::detail
