// The library's compiled part, built once in the one file of a project on
// the single header that defines LP_IMPLEMENTATION (every file of it is
// compiled with LP_SEPARATE_COMPILATION, as docs/getting-started.md shows).
#define LP_IMPLEMENTATION
#include <launchpad/launchpad.hpp>
