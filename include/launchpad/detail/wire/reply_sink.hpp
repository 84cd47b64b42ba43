#pragma once

#include <cstddef>
#include <string_view>

namespace lp::detail {

// Where the body of a large reply may go instead of the connection's
// buffer. A result of many numbers read from the buffer is one more copy
// of the whole body (4 MB for a million float32s); read straight into the
// result's own storage it is not (result.hpp, placed_vector).
class reply_sink {
 public:
  // place() is shown at most this much of the body's start: enough for a
  // result's head, a typed array's tag and its byte string's length.
  static constexpr std::size_t lead_size = 24;
  // Smaller bodies are read as usual: their copy costs less than a look.
  static constexpr std::size_t min_body = std::size_t{64} << 10;

  // `lead` is the start of a body of `body_size` bytes (a response of
  // `status` and `content_type`). Returns where its other
  // body_size - lead.size() bytes go, or null to read them as usual.
  virtual char* place(int status, std::string_view content_type, std::size_t body_size,
                      std::string_view lead) = 0;

 protected:
  ~reply_sink() = default;
};

}  // namespace lp::detail
