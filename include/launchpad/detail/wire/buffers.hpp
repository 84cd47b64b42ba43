#pragma once

// Bodies are read and written through buffers that each thread keeps from
// one call to the next. A fresh multi-megabyte buffer is fresh pages, and on
// a VM the first touch of a page costs microseconds: a 4 MB tensor in new
// buffers on every call spent more time in page faults than on the wire.

#include <cstddef>
#include <string>

namespace lp::detail {

// A thread keeps buffers up to this size; a larger body gets a buffer of its
// own, freed after use, so one huge call does not pin its memory forever.
inline constexpr std::size_t max_kept_buffer = std::size_t{16} << 20;

// Frees a thread's buffer that has grown past max_kept_buffer.
inline void drop_if_large(std::string& buffer) {
  if (buffer.capacity() > max_kept_buffer) std::string().swap(buffer);
}

// An empty buffer of this thread, one per `Use` (request, reply, ...),
// holding at least `expected` bytes of capacity.
template <class Use>
std::string& thread_buffer(std::size_t expected = 0) {
  thread_local std::string buffer;
  drop_if_large(buffer);
  buffer.clear();
  buffer.reserve(expected);
  return buffer;
}

// Bodies up to this size are copied next to their headers, to go out in one
// write: a copy costs less than a second packet. Larger ones are written
// straight from their buffer.
inline constexpr std::size_t streamed_body = std::size_t{64} << 10;

// Socket buffers (SO_SNDBUF, SO_RCVBUF) large enough for a 4 MB body to be
// in flight at once on loopback; the kernel's defaults make a sender wait for
// the reader many times per megabyte.
inline constexpr int socket_buffer_bytes = 4 << 20;

}  // namespace lp::detail
