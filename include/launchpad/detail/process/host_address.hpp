#pragma once

// Where a node of a Slurm launch listens: the nodes of one program run on
// several hosts, so loopback will not do. Each host works out its own
// address from --lp_slurm_host.

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <launchpad/error.hpp>
#include <string>
#include <string_view>

namespace lp::detail {

inline constexpr std::string_view slurm_policy = "slurm";

inline std::string ipv4_text(const sockaddr* address) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  return text;
}

// The IPv4 address of the interface `name`, or of the first interface that is
// up and not loopback if `name` is empty; empty if there is none.
inline std::string interface_address(const std::string& name) {
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return "";
  std::string address;
  for (auto* i = interfaces; i && address.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    bool wanted = name.empty() ? (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK)
                               : name == i->ifa_name;
    if (wanted) address = ipv4_text(i->ifa_addr);
  }
  ::freeifaddrs(interfaces);
  return address;
}

// The address of the host's name, unless it is loopback, as Debian's
// /etc/hosts makes it (127.0.1.1); empty then.
inline std::string host_name_address() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &found) != 0) return "";
  std::string address;
  for (auto* a = found; a && address.empty(); a = a->ai_next)
    if (auto text = ipv4_text(a->ai_addr); !text.starts_with("127.")) address = text;
  ::freeaddrinfo(found);
  return address;
}

// `choice` is "auto" (the address of the host's name, else of its first
// network interface that is not loopback), the name of an interface (its
// IPv4 address), or an address, used as it is.
inline std::string slurm_host_address(const std::string& choice) {
  if (choice == "auto") {
    auto address = host_name_address();
    if (address.empty()) address = interface_address("");
    if (address.empty())
      throw launch_error("this host has no IPv4 address other hosts could reach; pass "
                                  "--lp_slurm_host=<interface or address>");
    return address;
  }
  auto address = interface_address(choice);
  return address.empty() ? choice : address;
}

}  // namespace lp::detail
