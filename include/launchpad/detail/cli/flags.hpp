#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <launchpad/detail/serve/server_limits.hpp>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/policy.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace lp::detail {

// Where the launcher's status page listens (--lp_status_port): on a port of
// 127.0.0.1, 0 for any free one, or nowhere.
struct port_or_off {
  std::optional<int> number;  // empty: off
  friend bool operator==(const port_or_off&, const port_or_off&) = default;
};

// The --lp_* flags every launch shares, parsed once where lp::launch starts
// (read_command_line, below), in groups named for what they set, with the
// defaults. A policy's own flags (--lp_slurm_*, --lp_kube_*) are its
// launcher's options, in its own folder. Every other argument belongs to the
// user and is left alone.

// The limits of every node's server (docs/protocol.md, "Limits"), read
// straight into the values a server takes.
struct server_flags {
  std::size_t max_body_mb = 256;
  server_limits limits;  // its defaults are the flags'
};

// TLS between nodes (docs/protocol.md, "Encryption"): on, off, or auto (on
// where nodes serve beyond loopback); a site's own files, if given.
enum class tls_mode { on, off, automatic };
struct tls_flags {
  tls_mode mode = tls_mode::automatic;
  std::string ca, cert, key;
};

// docs/launching.md, "Fault tolerance".
struct checkpoint_flags {
  std::string dir;     // empty: checkpoint_dir_of (checkpoints.hpp) says
  std::string resume;  // a checkpoint directory of an earlier launch
};

// The launcher's status page (docs/observability.md).
struct status_flags {
  port_or_off port{0};
  int linger_secs = 0;
  std::string of;     // --lp_status=RUN_DIR: print that launch's status and exit
  bool json = false;  // ... as JSON
};

// How this host's processes that host nodes are run.
struct node_process_flags {
  bool insecure = false;
  bool system_malloc = false;  // leave malloc as it is (wire/buffers.hpp)
  int termination_notice_secs = 10;
  terminal_kind terminal = terminal_kind::current;
  std::string log_dir;             // empty: logs/ in the run directory
  std::string python = "python3";  // the Python nodes' interpreter (docs/python_nodes.md)
  std::string gpus;                // "0,1,2,3"; empty: the devices found
};

struct launch_flags {
  std::optional<std::string> launch;  // unset: the policy main() names
  bool help = false;
  std::string graph;  // empty: launch, draw nothing
  // Show what a cluster launch would submit, and submit nothing: a choice of
  // the launch, not of one cluster's options (slurm and kubernetes read it).
  bool dry_run = false;
  node_process_flags process;
  server_flags server;
  tls_flags tls;
  checkpoint_flags checkpoints;
  status_flags status;
  std::vector<std::string> arguments;  // the whole command line, argv[0] first
  // The flag that read each word of `arguments` ("--lp_x"), empty for the
  // user's words: a launcher passes on those its processes need.
  std::vector<std::string_view> read_by;
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

// One --lp_ flag of a table whose rows fill `Options`: the parser, the
// validation and --lp_help all read this row. A switch (a row without a
// hint) names the bool it turns on or off (`on`); any other flag takes a
// value, which `set` checks and stores. The flags every launch shares are
// flag_rows below; a launcher's own are its folder's (slurm/options.hpp,
// kube/options.hpp), and read_command_line (below) reads them all.
template <class Options>
struct flag_row {
  std::string_view name = {};     // "--lp_launch"
  std::string_view hint = {};     // what --lp_help shows after "=": "<policy>"
  std::string_view example = {};  // a real value, for the "needs a value" message
  std::string_view help = {};
  bool& (*on)(Options&) = nullptr;
  void (*set)(Options&, std::string_view name, std::string value) = nullptr;
  constexpr bool is_switch() const { return hint.empty(); }
};

inline constexpr flag_row<launch_flags> flag_rows[] = {
    {.name = "--lp_launch",
     .hint = "<policy>",
     .example = "local_mp",
     .help = "how to run the program: test_mt, local_mt, local_mp, slurm or kubernetes "
             "(default: the policy main() names, else local_mt)",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.launch = std::move(v); }},
    {.name = "--lp_terminal",
     .hint = "<where>",
     .example = "files",
     .help = "local_mp: where node output goes: current (this terminal, each line "
             "prefixed), files (one log per node) or tmux (logs, and a tmux window "
             "following each)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           auto word = one_of(name, std::move(v), {"current", "files", "tmux"});
           f.process.terminal = word == "current" ? terminal_kind::current
                                : word == "files" ? terminal_kind::files
                                                  : terminal_kind::tmux;
         }},
    {.name = "--lp_python",
     .hint = "<interpreter>",
     .example = "./venv/bin/python",
     .help = "the interpreter of the program's Python nodes (default: python3 on PATH)",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.process.python = one_line(name, std::move(v)); }},
    {.name = "--lp_log_dir",
     .hint = "<dir>",
     .example = "./logs",
     .help = "local_mp with files or tmux: the log directory (default: logs/ in the "
             "launch's run directory)",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.process.log_dir = std::move(v); }},
    {.name = "--lp_termination_notice_secs",
     .hint = "<n>",
     .example = "30",
     .help = "local_mp: seconds a node has to stop before it is killed (0 to 86400, "
             "default 10)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.process.termination_notice_secs =
               static_cast<int>(whole_number(name, v, 0, 86400));
         }},
    {.name = "--lp_max_body_mb",
     .hint = "<n>",
     .example = "1024",
     .help = "the largest request body a node accepts, in MiB; larger ones get 413 (1 to "
             "1048576, default 256)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.server.max_body_mb =
               static_cast<std::size_t>(whole_number(name, v, 1, 1 << 20));
         }},
    {.name = "--lp_header_timeout_secs",
     .hint = "<n>",
     .example = "30",
     .help = "seconds a request's headers may take from its first byte; a slower "
             "request gets 408 and its connection closes (1 to 3600, default 10)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.server.limits.header_timeout =
               std::chrono::seconds(whole_number(name, v, 1, 3600));
         }},
    {.name = "--lp_min_rate_kib_per_sec",
     .hint = "<n>",
     .example = "16",
     .help = "the slowest a peer may send a body or read a reply, in KiB/s on average "
             "after the header time; slower ones are cut off (1 to 1048576, default 64)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.server.limits.min_bytes_per_second =
               static_cast<std::size_t>(whole_number(name, v, 1, 1 << 20)) << 10;
         }},
    {.name = "--lp_max_connections",
     .hint = "<n>",
     .example = "16384",
     .help =
         "open connections per node, idle or not; more are answered 503 and closed (16 "
         "to 1048576, default 8192, at most half of ulimit -n)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.server.limits.max_connections =
               static_cast<std::size_t>(whole_number(name, v, 16, 1 << 20));
         }},
    {.name = "--lp_insecure",
     .help = "accept calls without the launch's secret (warns)",
     .on = [](launch_flags& f) -> bool& { return f.process.insecure; }},
    {.name = "--lp_tls",
     .hint = "<mode>",
     .example = "on",
     .help =
         "TLS between nodes, with a certificate made per launch that every peer must "
         "hold: on, off (warns where nodes serve beyond loopback) or auto (the default: "
         "on where they do, as under slurm)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           auto word = one_of(name, std::move(v), {"on", "off", "auto"});
           f.tls.mode = word == "on"    ? tls_mode::on
                        : word == "off" ? tls_mode::off
                                        : tls_mode::automatic;
         }},
    {.name = "--lp_tls_cert",
     .hint = "<file>",
     .example = "./node.crt",
     .help =
         "a site's own certificate (PEM) for TLS, instead of one made per launch; needs "
         "its key (below), and turns TLS on",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.tls.cert = std::move(v); }},
    {.name = "--lp_tls_key",
     .hint = "<file>",
     .example = "./node.key",
     .help = "the private key (PEM, unencrypted) of that certificate",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.tls.key = std::move(v); }},
    {.name = "--lp_tls_ca",
     .hint = "<file>",
     .example = "./site-ca.crt",
     .help = "the CA (PEM) that peers' certificates must verify against, instead of that "
             "certificate itself",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.tls.ca = std::move(v); }},
    {.name = "--lp_system_malloc",
     .help =
         "leave malloc as it is set; by default a process that hosts nodes keeps freed "
         "blocks up to 64 MiB (glibc's mallopt), as fresh pages for each large value "
         "cost "
         "more than sending it",
     .on = [](launch_flags& f) -> bool& { return f.process.system_malloc; }},
    {.name = "--lp_graph",
     .hint = "<format>",
     .example = "dot",
     .help = "print the program graph (dot or mermaid) and exit",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.graph = one_of(name, std::move(v), {"dot", "mermaid"});
         }},
    {.name = "--lp_checkpoint_dir",
     .hint = "<dir>",
     .example = "./checkpoints",
     .help =
         "where nodes with lp_save/lp_restore keep their checkpoints (default: a new "
         "directory per launch, named by its start time, in "
         "~/.local/state/launchpad/checkpoints/<program>/, or under $XDG_STATE_HOME if "
         "set; slurm: checkpoints/ in the run directory)",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.checkpoints.dir = std::move(v); }},
    {.name = "--lp_resume",
     .hint = "<dir>",
     .example = "/home/me/.local/state/launchpad/checkpoints/prog/2026-01-31_09-00-00",
     .help =
         "restore each node with checkpoints from this directory of an earlier launch, "
         "unless its own checkpoint in this launch's checkpoint directory is newer; it "
         "must hold a checkpoint of a node of this program",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.checkpoints.resume = std::move(v); }},
    {.name = "--lp_gpus",
     .hint = "<list>",
     .example = "0,1,2,3",
     .help =
         "local_mp: the GPU indices to hand out to groups with resources({.gpus = n}), "
         "through CUDA_VISIBLE_DEVICES (default: the devices found in /dev/nvidia*)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           for (auto index : split(v, ','))
             whole_number(name, std::string(index), 0, 1023);
           f.process.gpus = std::move(v);
         }},
    {.name = "--lp_status_port",
     .hint = "<port>",
     .example = "8080",
     .help = "local_mt, local_mp, slurm: the port of the launcher's status page on "
             "127.0.0.1 (default 0: any free one; off: no page)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           if (v != "off" && (v.empty() || v.size() > 5 ||
                              v.find_first_not_of("0123456789") != std::string::npos ||
                              std::stol(v) > 65535))
             throw usage_error(std::string(name) + "=" + v +
                               ": give a port from 0 to 65535, or off");
           f.status.port =
               v == "off" ? port_or_off{} : port_or_off{static_cast<int>(std::stol(v))};
         }},
    {.name = "--lp_status_linger_secs",
     .hint = "<n>",
     .example = "60",
     .help = "keep the status page up this long after the program ends, to see how it "
             "ended (0 to 86400, default 0)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.status.linger_secs = static_cast<int>(whole_number(name, v, 0, 86400));
         }},
    {.name = "--lp_status",
     .hint = "<run_dir>",
     .example = "/tmp/lp-counter-Ab12Cd",
     .help = "print the nodes of the running launch whose run directory this is, with "
             "their figures, and exit",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.status.of = std::move(v); }},
    {.name = "--lp_json",
     .help = "print the status above as JSON instead of a table",
     .on = [](launch_flags& f) -> bool& { return f.status.json; }},
};

// Shared too, and --lp_help lists them last, after every launcher's own
// flags: what to do instead of a launch.
inline constexpr flag_row<launch_flags> closing_flag_rows[] = {
    {.name = "--lp_dry_run",
     .help = "slurm: print the batch script and each node's command line, and submit "
             "nothing; kubernetes: write the manifests to files, for kubectl apply -k",
     .on = [](launch_flags& f) -> bool& { return f.dry_run; }},
    {.name = "--lp_help",
     .help = "print this help and exit",
     .on = [](launch_flags& f) -> bool& { return f.help; }},
};

// A table of rows that fill `Options`: a view of its array (std::span's
// constructors cost a user's file more to compile).
template <class Options>
struct flag_table {
  constexpr flag_table() = default;
  template <std::size_t N>
  constexpr flag_table(const flag_row<Options> (&rows)[N]) : first(rows), count(N) {}
  constexpr const flag_row<Options>* begin() const { return first; }
  constexpr const flag_row<Options>* end() const { return first + count; }
  constexpr std::size_t size() const { return count; }
  constexpr const flag_row<Options>& operator[](std::size_t i) const { return first[i]; }
  const flag_row<Options>* first = nullptr;
  std::size_t count = 0;
};

// The launcher of a launch policy P (lp::slurm, ...): its own flags
// (`options`, read by `flag_rows`) and how it runs a program
// (`run(graph, transport, flags, options)`). Each is specialized in the
// policy's folder; detail/launchers.hpp lists them.
template <class P>
struct launcher;

// The options of a launcher that has no flags of its own.
struct no_options {};

// Checked at compile time by the library's tests (tests/unit-flags.cpp),
// not in every file that launches, so that a row added later cannot lack
// what its messages need or shadow another row, of its table or of
// another. (Whether a row has its `on` or `set` is
// checked by tests/unit-flags.cpp: g++ with -fsanitize=undefined cannot
// compare a function pointer with null in a constant expression.)
template <class Options>
constexpr bool rows_are_sound(flag_table<Options> rows) {
  for (const auto& row : rows) {
    bool has_value_words = !row.hint.empty() && !row.example.empty();
    if (!row.name.starts_with("--lp_") || row.help.empty() ||
        !(row.is_switch() ? row.example.empty() : has_value_words))
      return false;
  }
  return true;
}

template <class A, class B>
constexpr bool no_name_twice(flag_table<A> a, flag_table<B> b) {
  bool same_table = false;
  if constexpr (std::is_same_v<A, B>) same_table = a.begin() == b.begin();
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j)
      if (a[i].name == b[j].name && !(same_table && i == j)) return false;
  return true;
}

template <class... Options>
constexpr bool flag_tables_are_sound(flag_table<Options>... tables) {
  auto against_all = [&](auto table) { return (no_name_twice(table, tables) && ...); };
  return (rows_are_sound(tables) && ...) && (against_all(tables) && ...);
}

inline constexpr std::size_t help_width = 80;
inline constexpr std::size_t help_indent = 24;  // where the descriptions start

// The --lp_help text of `tables`' rows, in order. Written when asked for,
// not fixed at compile time: every file that launches would pay for it.
template <class... Options>
std::string help_text(flag_table<Options>... tables) {
  std::string help;
  std::size_t column = 0;
  auto text = [&](std::string_view s) {
    help += s;
    auto line_end = s.rfind('\n');
    column =
        line_end == std::string_view::npos ? column + s.size() : s.size() - line_end - 1;
  };
  auto pad_to = [&](std::size_t indent) {
    while (column < indent) text(" ");
  };
  // Fills lines from `indent` to help_width, breaking between words.
  auto paragraph = [&](std::string_view words, std::size_t indent) {
    pad_to(indent);
    while (!words.empty()) {
      auto end = words.find(' ');
      auto word = words.substr(0, end);
      words = end == std::string_view::npos ? "" : words.substr(end + 1);
      if (column > indent && column + 1 + word.size() > help_width) {
        text("\n");
        pad_to(indent);
      } else if (column > indent) {
        text(" ");
      }
      text(word);
    }
    text("\n");
  };
  auto rows = [&](auto table) {
    for (const auto& row : table) {
      text("  ");
      text(row.name);
      if (!row.is_switch()) {
        text("=");
        text(row.hint);
      }
      if (column + 2 > help_indent) text("\n");
      paragraph(row.help, help_indent);
    }
  };
  paragraph(
      "Launchpad flags (every other argument, and every argument after --, is left "
      "to the program):",
      0);
  (rows(tables), ...);
  text("\n");
  paragraph(
      "A flag's value follows the = or is the next argument; a value that starts "
      "with -- must follow the =. A flag shown without =<...> is a switch: on when "
      "given alone or as =true, =1 or =yes; off as =false, =0 or =no.",
      0);
  return help;
}

template <class Options>
const flag_row<Options>* find_flag(flag_table<Options> rows, std::string_view name) {
  for (const auto& row : rows)
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
                               const char* next) {
  std::string message = std::string(name) + " needs a value, e.g. " + std::string(name) +
                        "=" + std::string(example);
  // The next word is the user's flag, or a value that only = can carry.
  if (next && std::string_view(next).starts_with("--") && std::string_view(next) != "--")
    message += "; a value that starts with -- must follow the =";
  return usage_error(message);
}

// The TLS flags that must go together (docs/launching.md, "Flags"): checked
// once every flag is read (read_command_line, below), as each row reads one
// flag alone.
inline void check_tls_flags(const tls_flags& tls) {
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

// The name, example and kind of the row of `tables` named `name`.
struct row_words {
  std::string_view name, example;
  bool is_switch = false;
};

// Tags each word of argv (argv[0] first) with the flag that reads it
// (`read_by`): a --lp_ word by the row of `tables` that names it, and, for
// a flag that takes a value and has no "=", the next word, its value. The
// user's words, and every word after "--", stay untagged. A launcher then
// passes on what the processes it starts need without reading argv again.
// A --lp_ word that no table names, or a value missing, is a usage error.
template <class... Options>
void tag_flag_words(int argc, char** argv, std::vector<std::string_view>& read_by,
                    flag_table<Options>... tables) {
  read_by.assign(static_cast<std::size_t>(argc), {});
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--lp_")) continue;
    auto equals = arg.find('=');
    auto name = arg.substr(0, equals);
    row_words row;
    auto look_up = [&](auto table) {
      const auto* found = find_flag(table, name);
      if (found) row = {found->name, found->example, found->is_switch()};
      return found != nullptr;
    };
    if (!(look_up(tables) || ...))
      throw usage_error("unknown flag " + std::string(name) +
                        "; run with --lp_help to list Launchpad's flags");
    read_by[static_cast<std::size_t>(i)] = row.name;
    if (row.is_switch) continue;  // never the next word, which may be the user's
    if (equals == std::string_view::npos) {
      const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
      if (!next || std::string_view(next).starts_with("--"))
        throw needs_value(row.name, row.example, next);
      read_by[static_cast<std::size_t>(++i)] = row.name;
      if (*next == '\0') throw needs_value(row.name, row.example, nullptr);
    } else if (equals + 1 == arg.size()) {
      throw needs_value(row.name, row.example, nullptr);
    }
  }
}

// Where apply_flags puts what one table's rows read.
template <class Options>
struct flag_target {
  flag_table<Options> rows;
  Options& into;
};

// Sets each target by the rows of its table that read a word of argv, as
// tag_flag_words tagged them, in argv's order: of a flag given twice, the
// last counts. A flag's value is after its "=", or the next word, which
// the same flag read (a value never starts with --).
template <class... Options>
void apply_flags(int argc, char** argv, const std::vector<std::string_view>& read_by,
                 flag_target<Options>... targets) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto flag = read_by[static_cast<std::size_t>(i)];
    if (flag.empty() || !arg.starts_with("--lp_")) continue;
    std::optional<std::string_view> value;
    if (auto equals = arg.find('='); equals != std::string_view::npos)
      value = arg.substr(equals + 1);
    else if (i + 1 < argc && read_by[static_cast<std::size_t>(i) + 1] == flag &&
             !std::string_view(argv[i + 1]).starts_with("--"))
      value = argv[i + 1];
    auto apply = [&](auto target) {
      const auto* row = find_flag(target.rows, flag);
      if (!row) return false;
      if (row->is_switch())
        row->on(target.into) = !value || switch_value(row->name, *value);
      else
        row->set(target.into, row->name, std::string(*value));
      return true;
    };
    (apply(targets) || ...);
  }
}

// The options of the launcher of the I-th policy of a list (a plain
// holder: std::tuple's constructors cost a user's file more to compile).
template <std::size_t I, class Options>
struct options_slot {
  Options value;
};

template <class Indices, class... Policies>
struct options_of_policies;
template <std::size_t... I, class... Policies>
struct options_of_policies<std::index_sequence<I...>, Policies...>
    : options_slot<I, typename launcher<Policies>::options>... {};

// Each launcher's options, in the order of `Policies`: slot<I>(options) is
// the I-th's.
template <class... Policies>
using launchers_options =
    options_of_policies<std::index_sequence_for<Policies...>, Policies...>;

template <std::size_t I, class Options>
Options& slot(options_slot<I, Options>& s) {
  return s.value;
}
template <std::size_t I, class Options>
const Options& slot(const options_slot<I, Options>& s) {
  return s.value;
}

// The options of type Options, of the one launcher that has them.
template <class Options, std::size_t I>
Options& options_of(options_slot<I, Options>& s) {
  return s.value;
}
template <class Options, std::size_t I>
const Options& options_of(const options_slot<I, Options>& s) {
  return s.value;
}

// A command line, read: the flags every launch shares, and the options of
// the launchers of `Policies` (detail/launchers.hpp lists those that
// --lp_launch names).
template <class... Policies>
struct command_line_of {
  launch_flags flags;
  launchers_options<Policies...> options;
};

// What reading a command line checks beyond each flag's own row.
struct read_checks {
  bool tls_together = true;  // the TLS flags go together (check_tls_flags)
};

template <class... Policies, std::size_t... I>
void read_each_table(int argc, char** argv, command_line_of<Policies...>& line,
                     read_checks checks, std::index_sequence<I...>) {
  auto& flags = line.flags;
  flags.arguments.assign(argv, argv + argc);
  tag_flag_words(argc, argv, flags.read_by, flag_table<launch_flags>(flag_rows),
                 launcher<Policies>::flag_rows...,
                 flag_table<launch_flags>(closing_flag_rows));
  // The shared flags first, and those that go together checked, then each
  // launcher's.
  apply_flags(argc, argv, flags.read_by, flag_target<launch_flags>{flag_rows, flags},
              flag_target<launch_flags>{closing_flag_rows, flags});
  if (checks.tls_together) check_tls_flags(flags.tls);
  apply_flags(argc, argv, flags.read_by,
              flag_target<typename launcher<Policies>::options>{
                  launcher<Policies>::flag_rows, slot<I>(line.options)}...);
}

// Reads argv (argv[0] first) into `line`, once, where a launch starts: each
// --lp_ flag by the row of the table that names it, the shared ones into
// line.flags and each launcher's into its options; then the flags that go
// together. detail/launchers.hpp's read_command_line reads the table of the
// policies that --lp_launch names.
template <class... Policies>
void read_tables(int argc, char** argv, command_line_of<Policies...>& line,
                 read_checks checks) {
  read_each_table(argc, argv, line, checks, std::index_sequence_for<Policies...>{});
}

}  // namespace lp::detail
