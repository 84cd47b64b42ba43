#pragma once

// A service that serves one method of another service, with the same name
// and signature, through a member function of its own: how a class template
// such as lp::cacher<Learner, &Learner::get_parameters> is a service without
// an LP_SERVICE of its own. LP_SERVICE only writes names, and no template can
// declare a member named after its argument; but the descriptor LP_SERVICE
// wrote for Learner::get_parameters carries its proxy member (`member`), so
// the forwarding service's client gets exactly that member, checked against
// Learner::get_parameters as a client of Learner would be.

#include <algorithm>
#include <array>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace lp::detail {

// The first of Descriptors whose member pointer is Pointer; void if none is.
template <auto Pointer, class... Descriptors>
struct descriptor_with {
  using type = void;
};
template <auto Pointer, class First, class... Rest>
struct descriptor_with<Pointer, First, Rest...> {
  static constexpr bool match = [] {
    if constexpr (std::is_same_v<typename First::pointer_type, decltype(Pointer)>)
      return First::pointer == Pointer;
    else
      return false;
  }();
  using type =
      std::conditional_t<match, First, typename descriptor_with<Pointer, Rest...>::type>;
};

// The descriptor among a service's `methods` (LP_SERVICE's Hana tuple of
// types) that lists Pointer; void if the service does not list it.
template <auto Pointer, class Methods>
struct listed_descriptor_of {
  using type = void;
};
template <auto Pointer, class... Listed>
struct listed_descriptor_of<Pointer, boost::hana::tuple<Listed...>>
    : descriptor_with<Pointer, typename Listed::type...> {};
template <auto Pointer, class Methods>
using listed_descriptor =
    typename listed_descriptor_of<Pointer, std::remove_cv_t<Methods>>::type;

// Listed's name, served by the forwarding service's member function Served
// (whose parameters and result are Listed's).
template <class Listed, auto Served>
struct served_as {
  static constexpr std::string_view name = Listed::name;
  template <class U>
  static constexpr bool named = true;
  template <class U>
  static constexpr bool addressable = true;
  static constexpr auto pointer = Served;
  using pointer_type = decltype(Served);
};

// Names joined at compile time, as a service's name must be a constant.
template <const std::string_view&... Parts>
struct joined_name {
  static constexpr auto text = [] {
    std::array<char, (Parts.size() + ... + 0)> out{};
    std::size_t at = 0;
    ((std::copy(Parts.begin(), Parts.end(), out.begin() + at), at += Parts.size()), ...);
    return out;
  }();
  static constexpr std::string_view value{text.data(), text.size()};
};

// What LP_SERVICE would have written for Service, had it one method Served
// named as Listed. Its lookup is declared beside Service, as
// `forwarding_definition<...> lp_service_lookup(lp_service_tag<Service>)`.
template <class Service, const std::string_view& Name, class Listed, auto Served>
struct forwarding_definition {
  using service_type = Service;
  static constexpr std::string_view name = Name;
  static constexpr auto methods = boost::hana::tuple_t<served_as<Listed, Served>>;
  template <class Caller>
  struct proxy : Caller, Listed::template member<Caller, proxy<Caller>> {
    using Caller::Caller;
  };
};

}  // namespace lp::detail
