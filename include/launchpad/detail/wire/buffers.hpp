#pragma once

// Bodies are read and written through buffers that each thread keeps from
// one call to the next. A fresh multi-megabyte buffer is fresh pages, and on
// a VM the first touch of a page costs microseconds: a 4 MB tensor in new
// buffers on every call spent more time in page faults than on the wire.

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstddef>
#include <cstdlib>
#include <mutex>
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

// glibc gives every block over a threshold (128 KiB, then as large as the
// largest block freed so far) fresh pages from the kernel and returns them on
// free, so each large body, value and copy of a call costs its page faults
// anew: two thirds of a 4 MB round trip here. A process that hosts nodes
// keeps blocks up to 64 MiB in its heap instead, and returns free memory to
// the kernel only past 128 MiB. It is the whole process's allocator, so the
// user can see it (docs/concepts.md) and turn it off (--lp_system_malloc);
// setting MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES
// leaves the choice to the user too.
inline void keep_large_blocks() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* chosen :
         {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"})
      if (std::getenv(chosen)) return;
    ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
    ::mallopt(M_TRIM_THRESHOLD, 128 << 20);
  });
#endif
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
