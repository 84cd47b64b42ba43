#pragma once

// result.hpp's share of the library's compiled part: the definitions that
// detail/implementation.hpp gathers (detail/config.hpp says where they are
// compiled).

#include <launchpad/detail/wire/result.hpp>
#include <nlohmann/json.hpp>

namespace lp::detail {

LP_API bool finite_numbers(const json& value) {
  if (value.is_number_float()) return std::isfinite(value.get<double>());
  if (value.is_structured())
    return std::all_of(value.begin(), value.end(),
                       [](const json& v) { return finite_numbers(v); });
  return true;
}

LP_API void reply_to_json(written_reply& out) {
  std::string whole;
  json body = json_of_written(out.joined(whole));
  typed_array::expand(body);
  if (!finite_numbers(body))
    throw call_failure(
        500, protocol::error::remote_exception,
        std::string("the result holds NaN or infinity, which JSON cannot carry; ask for "
                    "CBOR (Accept: ") +
            protocol::media::cbor + ")");
  out.clear();
  out.body.bytes() = body.dump(-1, ' ', false, json::error_handler_t::replace);
}

LP_API void write_void_result(written_reply& out, protocol::format f) {
  out.clear();
  out.body.bytes() += result_prefix;
  out.body.bytes() += static_cast<char>(0xf6);
  if (f == protocol::format::json) reply_to_json(out);
}

LP_API void write_error(written_reply& out, std::string_view code,
                        const std::string& message, std::string_view node,
                        std::string_view method, protocol::format f) {
  out.clear();
  out.body.bytes() =
      protocol::encode(protocol::error_body(code, message, node, method), f);
}

LP_API json result_of(const std::string& node, const std::string& method, int status,
                      json&& reply) {
  if (status == 200 && reply.is_object() && reply.contains("result"))
    return std::move(reply["result"]);
  const json* error =
      reply.is_object() && reply.contains("error") ? &reply["error"] : nullptr;
  auto text = [&](const char* key, const std::string& fallback) {
    return error && error->contains(key) && (*error)[key].is_string()
               ? (*error)[key].get<std::string>()
               : fallback;
  };
  // An empty code is no code: the caller matches on it.
  auto code = text("code", "");
  if (code.empty()) code = "http_" + std::to_string(status);
  auto message = text("message", "HTTP status " + std::to_string(status));
  throw remote_error(node, method, code, message, status);
}

LP_API json result_in(const std::string& node, const std::string& method,
                      const raw_reply& reply) {
  json parsed;
  try {
    parsed = protocol::decode(reply.body, reply.format);
  } catch (const std::exception& e) {
    throw remote_error(node, method, "http_" + std::to_string(reply.status),
                       "an unreadable reply (" + std::string(e.what()) + ")",
                       reply.status);
  }
  return result_of(node, method, reply.status, std::move(parsed));
}

LP_API void check_reply(const std::string& node, const std::string& method,
                        const raw_reply& reply) {
  result_in(node, method, reply);
}

LP_API std::string result_cbor(const std::string& node, const std::string& method,
                               const raw_reply& reply) {
  return cbor_of(result_in(node, method, reply));
}

LP_API void misfit_result(const std::string& node, const std::string& method,
                          const decode_error& e) {
  throw transport_error(
      node, method,
      std::string("the node's reply does not fit the result type: ") + e.reason());
}

}  // namespace lp::detail
