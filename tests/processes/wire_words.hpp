#pragma once

namespace scenarios {

// What the wire scenario's talker says (scenarios.hpp): a test looks for it
// in what crossed the network, where TLS must hide it.
inline constexpr const char* wire_words = "lp-wire-words-5a1e7c0d";

}  // namespace scenarios
