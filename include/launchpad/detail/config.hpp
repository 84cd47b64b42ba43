#pragma once

// Where the library's compiled part lives (docs/concepts.md, "How the library
// is built"). The launchers, the servers, the process and Slurm code are no
// templates: a user's code needs only their declarations.
//
// - By default every definition is inline in the headers: one include and
//   nothing to link, at the price of compiling it all in each translation
//   unit that includes launchpad.hpp.
// - With LP_SEPARATE_COMPILATION (the meson dependency defines it), the
//   headers declare those parts only, and they are compiled once: in the
//   library the meson dependency builds, or, with the single header, in the
//   one translation unit that also defines LP_IMPLEMENTATION.
#if !defined(LP_SEPARATE_COMPILATION)
#define LP_API inline
#define LP_DETAIL_DEFINE_COMPILED_PART 1
#elif defined(LP_IMPLEMENTATION)
#define LP_API
#define LP_DETAIL_DEFINE_COMPILED_PART 1
#else
#define LP_API
#define LP_DETAIL_DEFINE_COMPILED_PART 0
#endif

// The compiled part reads and writes JSON (bodies, describe, the
// rendezvous): it alone needs nlohmann's header. A user's code sees only
// its declarations (<nlohmann/json_fwd.hpp>), unless it includes
// <launchpad/json.hpp> to use lp::json as a wire type.
#if LP_DETAIL_DEFINE_COMPILED_PART
#include <nlohmann/json.hpp>
#endif
