#pragma once

// to_wire: a C++ value as it goes on the wire, the mirror of from_wire
// (decode.hpp). nlohmann's own conversion (`json j = value`) is used for
// everything but what must look different: vectors of numbers become typed
// arrays, and containers are walked so that those inside them do too.

#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <launchpad/detail/wire/json_decode.hpp>
#include <launchpad/detail/wire/typed_array.hpp>
#include <launchpad/wire.hpp>
#include <tuple>
#include <utility>

namespace lp::detail {

template <class T>
json to_wire(const T& value) {
  if constexpr (is_std_vector<T>) {
    using element = typename T::value_type;
    if constexpr (packable<element> && std::is_same_v<T, std::vector<element>>) {
      return typed_array::pack(value.data(), value.size());
    } else {
      json out = json::array();
      out.get_ref<json::array_t&>().reserve(value.size());
      for (const auto& item : value) out.push_back(to_wire<element>(item));
      return out;
    }
  } else if constexpr (is_optional<T>) {
    return value ? to_wire(*value) : json(nullptr);
  } else if constexpr (is_string_map<T>) {
    json out = json::object();
    for (const auto& [key, item] : value) out[key] = to_wire(item);
    return out;
  } else if constexpr (is_tuple_like<T>) {
    json out = json::array();
    std::apply([&](const auto&... item) { (out.push_back(to_wire(item)), ...); }, value);
    return out;
  } else if constexpr (hana_struct<T>) {
    json out = json::object();
    boost::hana::for_each(boost::hana::accessors<T>(), [&](auto member) {
      out[boost::hana::to<const char*>(boost::hana::first(member))] =
          to_wire(boost::hana::second(member)(value));
    });
    return out;
  } else {
    return json(value);
  }
}

}  // namespace lp::detail
