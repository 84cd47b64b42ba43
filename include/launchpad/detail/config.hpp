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
//
// The definitions sit apart from the declarations, in impl/<header>_inl.hpp
// beside each header; detail/implementation.hpp gathers them all, and the
// end of launch.hpp includes it where this macro says so: the one place that
// decides, so that the order of a file's includes does not matter.
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
