// Precompiled for the unit tests: the library and doctest are most of every
// test file's compile time.
#include <doctest/doctest.h>

#include <launchpad/json.hpp>
#include <launchpad/launchpad.hpp>
