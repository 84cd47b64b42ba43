#pragma once

// cbor_decode.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/cbor_decode.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail::cbor {

LP_API void mismatch(reader& in, std::size_t start, std::string_view expected,
                     std::string_view type) {
  in.seek(start);
  json item = in.read();
  throw decode_error("expected " + std::string(expected) + " (" + readable_type(type) +
                     "), got " + describe_value(item));
}

LP_API void not_a_tensor(reader& in, std::size_t start) {
  in.seek(start);
  json item = in.read();
  throw decode_error("expected a tensor, an object with 'shape' and 'data', got " +
                     describe_value(item));
}

LP_API std::size_t count_items(reader& in) {
  auto at = in.at();
  std::size_t count = 0;
  {
    reader::nested items(in);
    while (!in.at_break()) {
      in.skip();
      ++count;
    }
  }
  in.seek(at);
  return count;
}

LP_API void deferred_misfits::note(std::string_view key, const decode_error& e) {
  if (!misfits_)
    misfits_ = std::make_unique<std::map<std::string, std::string, std::less<>>>();
  (*misfits_)[std::string(key)] = e.reason();
}

LP_API const std::string* deferred_misfits::find(std::size_t index) const {
  if (!misfits_) return nullptr;
  auto it = misfits_->find(order(index));
  return it == misfits_->end() ? nullptr : &it->second;
}

LP_API std::string deferred_misfits::order(std::size_t index) {
  auto digits = std::to_string(index);
  return std::string(20 - digits.size(), '0') + digits;
}

LP_API void deferred_misfits::erase(std::string_view key) {
  auto it = misfits_->find(key);
  if (it != misfits_->end()) misfits_->erase(it);
}

LP_API void deferred_misfits::throw_any() const {
  if (!misfits_->empty()) throw decode_error(misfits_->begin()->second);
}

}  // namespace lp::detail::cbor
