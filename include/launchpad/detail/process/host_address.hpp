#pragma once

// Where a node of a Slurm launch listens: the nodes of one program run on
// several hosts, so loopback will not do. Each host works out its own
// address from --lp_slurm_host: IPv4 where the host has one, else IPv6 (a
// global or unique local address; a link-local one needs an interface name
// that other hosts cannot know).

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <launchpad/error.hpp>
#include <string>

namespace lp::detail {

inline std::string ipv4_text(const sockaddr* address) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text,
              sizeof text);
  return text;
}

// The text of an IPv6 address that other hosts could reach; empty for
// loopback, link-local, unspecified and IPv4-mapped ones.
inline std::string ipv6_text(const sockaddr* address) {
  auto* in6 = &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
  if (IN6_IS_ADDR_LOOPBACK(in6) || IN6_IS_ADDR_LINKLOCAL(in6) ||
      IN6_IS_ADDR_UNSPECIFIED(in6) || IN6_IS_ADDR_V4MAPPED(in6))
    return "";
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET6, in6, text, sizeof text);
  return text;
}

// The IPv4 (or, with AF_INET6, IPv6) address of the interface `name`, or of
// the first interface that is up and not loopback if `name` is empty; empty
// if there is none.
inline std::string interface_address(const std::string& name, int family = AF_INET) {
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return "";
  std::string address;
  for (auto* i = interfaces; i && address.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != family) continue;
    bool wanted = name.empty() ? (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK)
                               : name == i->ifa_name;
    if (wanted)
      address = family == AF_INET ? ipv4_text(i->ifa_addr) : ipv6_text(i->ifa_addr);
  }
  ::freeifaddrs(interfaces);
  return address;
}

// The IPv4 (or IPv6) address of the host's name, unless it is loopback, as
// Debian's /etc/hosts makes it (127.0.1.1); empty then.
inline std::string host_name_address(int family = AF_INET) {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &found) != 0) return "";
  std::string address;
  for (auto* a = found; a && address.empty(); a = a->ai_next) {
    if (family == AF_INET6)
      address = ipv6_text(a->ai_addr);
    else if (auto text = ipv4_text(a->ai_addr); !text.starts_with("127."))
      address = text;
  }
  ::freeaddrinfo(found);
  return address;
}

// `choice` is "auto" (the address of the host's name, else of its first
// network interface that is not loopback; IPv4 first, then IPv6), the name
// of an interface (its IPv4 address, else its IPv6 one), or an address,
// used as it is (an IPv6 one bare, or in brackets, which go).
inline std::string slurm_host_address(const std::string& choice) {
  if (choice == "auto") {
    std::string address;
    for (int family : {AF_INET, AF_INET6}) {
      if (address.empty()) address = host_name_address(family);
      if (address.empty()) address = interface_address("", family);
    }
    if (address.empty())
      throw launch_error(
          "this host has no IPv4 or IPv6 address other hosts could reach; pass "
          "--lp_slurm_host=<interface or address>");
    return address;
  }
  auto address = interface_address(choice);
  if (address.empty()) address = interface_address(choice, AF_INET6);
  if (!address.empty()) return address;
  if (choice.size() > 2 && choice.front() == '[' && choice.back() == ']')
    return choice.substr(1, choice.size() - 2);
  return choice;
}

}  // namespace lp::detail
