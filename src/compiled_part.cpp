// The library's compiled part (docs/concepts.md, "How the library is built"):
// the headers' non-template definitions, which src/compiled_part.txt's
// definitions switch on here only, so that they are compiled once, into the
// static library, and not in every file of a user's.
#include <launchpad/launchpad.hpp>
