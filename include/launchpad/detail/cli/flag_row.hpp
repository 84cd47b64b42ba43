#pragma once

// A row of a table of --lp_ flags: its name, the words --lp_help and the
// messages show, how it reads its value into launch_settings and writes it
// back out, and whether the processes a launch starts get it. The tables
// themselves are cli/launch_flags.hpp's; cli/command_line.hpp reads and
// writes command lines with them.

#include <cstddef>
#include <initializer_list>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail {

// A flag's values as words, for a command line: one for most, none at the
// default of a flag that repeats, one per repeat.
using flag_words = std::vector<std::string>;

// A row's help that names a protocol value (a metric, a file of the run
// directory) in its one spelling, protocol.toml's: the parts joined at
// compile time into text that lives as long as the table.
template <std::size_t N>
struct joined_help {
  char chars[N + 1] = {};
  constexpr std::string_view view() const { return {chars, N}; }
};

template <std::size_t P>
constexpr std::size_t joined_length(const std::string_view (&parts)[P]) {
  std::size_t n = 0;
  for (std::string_view part : parts) n += part.size();
  return n;
}

template <std::size_t N, std::size_t P>
constexpr joined_help<N> join_help(const std::string_view (&parts)[P]) {
  joined_help<N> out;
  std::size_t at = 0;
  for (std::string_view part : parts)
    for (char c : part) out.chars[at++] = c;
  return out;
}

// One --lp_ flag: the parser, the writer, the validation and --lp_help all
// read this row. A switch (a row without a hint) names the bool it turns on
// or off (`on`); any other flag takes a value, which `set` checks and
// stores, and `get` gives back as `set` reads it. Adding a setting that
// launches pass down is one field of launch_settings and one row.
struct flag_row {
  std::string_view name = {};     // "--lp_launch"
  std::string_view hint = {};     // what --lp_help shows after "=": "<policy>"
  std::string_view example = {};  // a real value, for the "needs a value" message
  std::string_view help = {};
  // Whether each process a launch starts gets the flag: false for what only
  // the process that the user started reads (--lp_dry_run, --lp_help), and
  // for files only it may see (a site's TLS files: the processes it starts
  // read the launch's credentials from its run directory or Secret).
  bool to_children = true;
  bool& (*on)(launch_settings&) = nullptr;
  void (*set)(launch_settings&, std::string_view name, std::string value) = nullptr;
  flag_words (*get)(const launch_settings&) = nullptr;
  constexpr bool is_switch() const { return hint.empty(); }
};

// A table of rows: a view of its array (std::span's constructors cost a
// user's file more to compile).
struct flag_table {
  constexpr flag_table() = default;
  template <std::size_t N>
  constexpr flag_table(const flag_row (&rows)[N]) : first(rows), count(N) {}
  constexpr const flag_row* begin() const { return first; }
  constexpr const flag_row* end() const { return first + count; }
  constexpr std::size_t size() const { return count; }
  constexpr const flag_row& operator[](std::size_t i) const { return first[i]; }
  constexpr bool holds(const flag_row* row) const { return row >= first && row < end(); }
  const flag_row* first = nullptr;
  std::size_t count = 0;
};

inline long whole_number(std::string_view flag, const std::string& text, long low,
                         long high) {
  try {
    std::size_t used = 0;
    long number = std::stol(text, &used);
    if (used == text.size() && number >= low && number <= high) return number;
  } catch (const std::exception&) {
  }
  throw usage_error(std::string(flag) + "=" + text + ": give a whole number from " +
                    std::to_string(low) + " to " + std::to_string(high));
}

// A value that goes into a manifest or a command line printed for the
// user: one line of visible characters. The YAML quotes it anyway; a control
// character would still garble what the user reads.
inline std::string one_line(std::string_view flag, std::string value) {
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f)
      throw usage_error(std::string(flag) +
                        " needs a value on one line, without control "
                        "characters");
  return value;
}

inline std::string one_of(std::string_view flag, std::string value,
                          std::initializer_list<std::string_view> choices) {
  for (auto choice : choices)
    if (value == choice) return value;
  throw usage_error(std::string(flag) + "=" + value + ": choose " +
                    choices_text(choices));
}

// Checked at compile time by the library's tests (tests/unit-flags.cpp),
// not in every file that launches, so that a row added later cannot lack
// what its messages need or shadow another row, of its table or of
// another. (Whether a row has its `on`, or its `set` and `get`, is checked
// by tests/unit-flags.cpp: g++ with -fsanitize=undefined cannot compare a
// function pointer with null in a constant expression.)
constexpr bool rows_are_sound(flag_table rows) {
  for (const auto& row : rows) {
    bool has_value_words = !row.hint.empty() && !row.example.empty();
    if (!row.name.starts_with("--lp_") || row.help.empty() ||
        !(row.is_switch() ? row.example.empty() : has_value_words))
      return false;
  }
  return true;
}

constexpr bool no_name_twice(flag_table a, flag_table b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j)
      if (a[i].name == b[j].name && !(a.begin() == b.begin() && i == j)) return false;
  return true;
}

template <std::size_t N>
constexpr bool flag_tables_are_sound(const flag_table (&tables)[N]) {
  for (const auto& table : tables) {
    if (!rows_are_sound(table)) return false;
    for (const auto& other : tables)
      if (!no_name_twice(table, other)) return false;
  }
  return true;
}

}  // namespace lp::detail
