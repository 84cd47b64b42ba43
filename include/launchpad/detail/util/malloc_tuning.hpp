#pragma once

// How a process that hosts nodes tunes glibc's malloc, and how it gives
// back what the tuning keeps once a load has gone.
//
// glibc gives every block over a threshold (128 KiB, then as large as the
// largest block freed so far) fresh pages from the kernel and returns them on
// free, so each large body, value and copy of a call costs its page faults
// anew: two thirds of a 4 MB round trip here. A process that hosts nodes
// (or a test's, which calls them: process_test_options::system_malloc)
// keeps blocks up to 128 MiB in its heap instead, and returns free memory
// to the kernel only past 128 MiB. An arena of another thread than the
// main one is a heap of at most 64 MiB whatever the threshold: there a
// node's large vectors are used again by the wire (wire/spare_vectors.hpp).
//
// Kept for good, that memory would follow the process's peak load: each
// thread allocates from one of up to 8 arenas per core, and the free memory
// of an arena whose threads have gone stays resident (a node that took 64
// connections of 64 KB bodies kept 3.5x the RSS it had before, long after
// its 64 threads had retired). So when a pool's idle thread leaves
// (util/thread_pool.hpp), the process lowers the trim threshold to glibc's
// default while that wave of threads ends: what each frees as it ends, and
// one block of 64 KiB it frees once its thread_locals are gone, trims the
// top of its arena. 0.2 s after the last of them has left, the process
// returns the free pages inside every arena (malloc_trim) and keeps large
// blocks again. A busy process pays once per wave of departing threads:
// during it, large blocks freed at the top of an arena go back to the
// kernel, and those free in the arenas at its end come back as fresh pages.
//
// It is the whole process's allocator, so the user can see it
// (docs/concepts.md) and turn it off (--lp_system_malloc,
// test_options::system_malloc); setting MALLOC_MMAP_THRESHOLD_,
// MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES leaves the choice to the user
// too. Elsewhere than glibc, nothing happens.

#include <cstddef>
#include <launchpad/detail/config.hpp>

namespace lp::detail {

// Tunes malloc as above, once per process; the first call decides.
LP_API void keep_large_blocks();

// Called by a pool thread that leaves after its idle limit, before it
// frees what it holds (its thread_locals); nothing unless keep_large_blocks
// tuned the process.
LP_API void pool_thread_leaving();

// How often the process has given its free memory back so far.
LP_API std::size_t memory_returns();

}  // namespace lp::detail
