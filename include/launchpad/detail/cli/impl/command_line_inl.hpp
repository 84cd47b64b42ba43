#pragma once

// command_line.hpp's share of the library's compiled part: the definitions
// that detail/implementation.hpp gathers (detail/config.hpp says where they
// are compiled).

#include <launchpad/detail/cli/command_line.hpp>

#include <launchpad/detail/cli/flag_row.hpp>
#include <launchpad/detail/cli/flag_tables.hpp>
#include <launchpad/error.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

inline const flag_row* find_flag(std::string_view name) {
  for (const auto& table : every_flag_table)
    for (const auto& row : table)
      if (row.name == name) return &row;
  return nullptr;
}

inline bool switch_value(std::string_view name, std::string_view value) {
  if (value == "true" || value == "1" || value == "yes") return true;
  if (value == "false" || value == "0" || value == "no") return false;
  throw usage_error(std::string(name) + "=" + std::string(value) +
                    ": give true, false, 1, 0, yes or no (" + std::string(name) +
                    " alone is true)");
}

inline usage_error needs_value(std::string_view name, std::string_view example,
                               const std::string* next) {
  std::string message = std::string(name) + " needs a value, e.g. " + std::string(name) +
                        "=" + std::string(example);
  // The next word is the user's flag, or a value that only = can carry.
  if (next && next->starts_with("--") && *next != "--")
    message += "; a value that starts with -- must follow the =";
  return usage_error(message);
}

// The TLS flags that must go together (docs/launching.md, "Flags"): checked
// once every flag is read, as each row reads one flag alone.
inline void check_tls_flags(const tls_settings& tls) {
  if (tls.cert.empty() != tls.key.empty())
    throw usage_error(
        "--lp_tls_cert and --lp_tls_key go together: give a certificate and "
        "its key");
  if (!tls.ca.empty() && tls.cert.empty())
    throw usage_error(
        "--lp_tls_ca needs --lp_tls_cert and --lp_tls_key: the certificate it "
        "signed, and its key");
  if (tls.mode == tls_mode::off && !tls.cert.empty())
    throw usage_error("--lp_tls=off and --lp_tls_cert contradict each other: drop one");
}

// The row that reads each word of `command` (argv[0] first): a --lp_ word
// by the row that names it, and, for a flag that takes a value and has no
// "=", the next word, its value. None reads the user's words, nor any word
// from "--" on. A --lp_ word that no row names, or a value missing, is a
// usage error.
inline std::vector<const flag_row*> rows_reading(
    const std::vector<std::string>& command) {
  std::vector<const flag_row*> row_of(command.size(), nullptr);
  for (std::size_t i = 1; i < command.size(); ++i) {
    std::string_view word = command[i];
    if (word == "--") break;
    if (!word.starts_with("--lp_")) continue;
    auto equals = word.find('=');
    auto name = word.substr(0, equals);
    const auto* row = find_flag(name);
    if (!row)
      throw usage_error("unknown flag " + std::string(name) +
                        "; run with --lp_help to list Launchpad's flags");
    row_of[i] = row;
    if (row->is_switch()) continue;  // never the next word, which may be the user's
    if (equals == std::string_view::npos) {
      const std::string* next = i + 1 < command.size() ? &command[i + 1] : nullptr;
      if (!next || next->starts_with("--"))
        throw needs_value(row->name, row->example, next);
      row_of[++i] = row;
      if (next->empty()) throw needs_value(row->name, row->example, nullptr);
    } else if (equals + 1 == word.size()) {
      throw needs_value(row->name, row->example, nullptr);
    }
  }
  return row_of;
}

// Sets `settings` by the flags that read a word of `command`, in its order,
// those every launch shares or each policy's own (`shared`): of a flag given
// twice, the last counts. A flag's value is after its "=", or the next
// word, which the same row read (a value never starts with --).
inline void apply_flags(const std::vector<std::string>& command,
                        const std::vector<const flag_row*>& row_of, bool shared,
                        launch_settings& settings) {
  for (std::size_t i = 1; i < command.size(); ++i) {
    const auto* row = row_of[i];
    std::string_view word = command[i];
    if (!row || !word.starts_with("--lp_") || is_shared_flag(row) != shared) continue;
    std::optional<std::string_view> value;
    if (auto equals = word.find('='); equals != std::string_view::npos)
      value = word.substr(equals + 1);
    else if (i + 1 < command.size() && row_of[i + 1] == row &&
             !command[i + 1].starts_with("--"))  // not the same flag again
      value = command[i + 1];
    if (row->is_switch())
      row->on(settings) = !value || switch_value(row->name, *value);
    else
      row->set(settings, row->name, std::string(*value));
  }
}

LP_API launch_settings read_command_line(std::vector<std::string> command,
                                         read_checks checks) {
  launch_settings settings;
  auto row_of = rows_reading(command);
  for (std::size_t i = 1; i < command.size(); ++i)
    if (!row_of[i]) settings.user_arguments.push_back(command[i]);
  apply_flags(command, row_of, true, settings);
  if (checks.tls_together) check_tls_flags(settings.tls);
  apply_flags(command, row_of, false, settings);
  settings.command = std::move(command);
  return settings;
}

LP_API std::vector<std::string> child_arguments(const launch_settings& settings) {
  const launch_settings defaults;
  // A switch's row gives its bool to change; these copies only read it.
  auto now = settings, before = defaults;
  std::vector<std::string> words;
  for (const auto& table : every_flag_table)
    for (const auto& row : table) {
      if (!row.to_children) continue;
      std::string name(row.name);
      if (row.is_switch()) {
        if (row.on(now) != row.on(before))
          words.push_back(row.on(now) ? name : name + "=false");
        continue;
      }
      auto values = row.get(settings);
      if (values == row.get(defaults)) continue;
      for (auto& value : values) words.push_back(name + "=" + value);
    }
  words.insert(words.end(), settings.user_arguments.begin(),
               settings.user_arguments.end());
  return words;
}

LP_API std::string flags_help() {
  constexpr std::size_t indent = 24;  // where the descriptions start
  std::string help;
  std::size_t column = 0;
  auto text = [&](std::string_view s) {
    help += s;
    auto line_end = s.rfind('\n');
    column =
        line_end == std::string_view::npos ? column + s.size() : s.size() - line_end - 1;
  };
  auto pad_to = [&](std::size_t to) {
    while (column < to) text(" ");
  };
  // Fills lines from `from` to help_width, breaking between words.
  auto paragraph = [&](std::string_view words, std::size_t from) {
    pad_to(from);
    while (!words.empty()) {
      auto end = words.find(' ');
      auto word = words.substr(0, end);
      words = end == std::string_view::npos ? "" : words.substr(end + 1);
      if (column > from && column + 1 + word.size() > help_width) {
        text("\n");
        pad_to(from);
      } else if (column > from) {
        text(" ");
      }
      text(word);
    }
    text("\n");
  };
  paragraph(
      "Launchpad flags (every other argument, and every argument after --, is left "
      "to the program):",
      0);
  for (const auto& table : every_flag_table)
    for (const auto& row : table) {
      text("  ");
      text(row.name);
      if (!row.is_switch()) {
        text("=");
        text(row.hint);
      }
      if (column + 2 > indent) text("\n");
      paragraph(row.help, indent);
    }
  text("\n");
  paragraph(
      "A flag's value follows the = or is the next argument; a value that starts "
      "with -- must follow the =. A flag shown without =<...> is a switch: on when "
      "given alone or as =true, =1 or =yes; off as =false, =0 or =no.",
      0);
  return help;
}

}  // namespace lp::detail
