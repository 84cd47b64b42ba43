#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <launchpad/launch/policy.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

// Where the launcher's status page listens (--lp_status_port): on a port of
// 127.0.0.1, 0 for any free one, or nowhere.
struct port_or_off {
  std::optional<int> number;  // empty: off
  friend bool operator==(const port_or_off&, const port_or_off&) = default;
};

// What the --lp_* flags of a launch asked for, with the defaults. Each member
// is set by the row of flag_table below named after it (insecure by
// --lp_insecure, ...). Every other argument belongs to the user and is left
// alone.
struct launch_flags {
  std::optional<std::string> launch;  // unset: the policy main() names
  bool help = false;
  bool insecure = false;
  // TLS between nodes (docs/protocol.md, "Encryption"): on, off, or auto
  // (on where nodes serve beyond loopback); a site's own files, if given.
  std::string tls = "auto";
  std::string tls_ca, tls_cert, tls_key;
  bool system_malloc = false;  // leave malloc as it is (wire/buffers.hpp)
  int termination_notice_secs = 10;
  terminal_kind terminal = terminal_kind::current;
  std::string log_dir;             // empty: logs/ in the run directory
  std::string python = "python3";  // the Python nodes' interpreter (docs/python_nodes.md)
  std::size_t max_body_mb = 256;
  int header_timeout_secs = 10;  // docs/protocol.md, "Limits"
  std::size_t min_rate_kib_per_sec = 64;
  std::size_t max_connections = 8192;
  std::string graph;  // empty: launch, draw nothing
  // docs/launching.md, "Fault tolerance"
  std::string checkpoint_dir;  // empty: checkpoint_dir_of (checkpoints.hpp) says
  std::string resume;          // a checkpoint directory of an earlier launch
  std::string gpus;            // "0,1,2,3"; empty: the devices found
  // The launcher's status page (docs/observability.md).
  port_or_off status_port{0};
  int status_linger_secs = 0;
  std::string status_of;  // --lp_status=RUN_DIR: print that launch's status and exit
  bool json = false;      // ... as JSON
  // --lp_launch=slurm (docs/slurm.md)
  std::string slurm_partition;
  std::string slurm_time;
  std::string slurm_account;
  std::vector<std::string> slurm_sbatch;  // each an sbatch option
  std::string slurm_dir = "lp-slurm";     // shared with the compute hosts
  std::string slurm_host = "auto";        // address, interface or auto
  bool slurm_detach = false;
  // --lp_launch=kubernetes (docs/kubernetes.md)
  std::string kube_image;  // required to write manifests
  std::string kube_namespace = "default";
  std::string kube_binary;           // empty: /usr/local/bin/ and argv[0]'s file name
  std::string kube_dir = "lp-kube";  // where --lp_dry_run writes the manifests
  bool dry_run = false;
  std::vector<std::string> arguments;  // the whole command line, argv[0] first
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

// A value that goes into a batch script line: one line, nothing a shell
// would expand there.
inline std::string script_safe(std::string_view flag, std::string value) {
  if (value.empty() || value.find_first_of("\n\r'") != std::string::npos)
    throw usage_error(std::string(flag) + " needs a value on one line, without quotes");
  return value;
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

// A Kubernetes namespace: a DNS label (RFC 1123), as the API server demands.
inline std::string dns_label_value(std::string_view flag, std::string value) {
  bool fits =
      !value.empty() && value.size() <= 63 && value.front() != '-' && value.back() != '-';
  for (char c : value)
    fits = fits && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (!fits)
    throw usage_error(
        std::string(flag) + "=" + one_line(flag, value) +
        ": give a DNS label: at most 63 lower-case letters, digits and '-', "
        "starting and ending with a letter or digit, e.g. " +
        std::string(flag) + "=research");
  return value;
}

// A container image reference (registry/repository:tag or @digest): the
// characters a reference can hold, so a typo shows here and not as a pod
// that never pulls.
inline std::string image_reference(std::string_view flag, std::string value) {
  bool fits = !value.empty() && value.size() <= 512;
  for (char c : value)
    fits = fits &&
           ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            std::string_view("._-/:@+").find(c) != std::string_view::npos);
  if (!fits)
    throw usage_error(std::string(flag) + "=" + one_line(flag, value) +
                      ": give an image reference, e.g. " + std::string(flag) +
                      "=registry.example.com/team/prog:1.0");
  return value;
}

inline std::string one_of(std::string_view flag, std::string value,
                          std::initializer_list<std::string_view> choices) {
  std::string listed;
  std::size_t left = choices.size();
  for (auto choice : choices) {
    if (value == choice) return value;
    listed += choice;
    --left;
    listed += left > 1 ? ", " : left == 1 ? " or " : "";
  }
  throw usage_error(std::string(flag) + "=" + value + ": choose " + listed);
}

// One --lp_ flag: the parser, the validation and --lp_help all read this row.
// A switch names the member it sets (`on`); any other flag takes a value,
// which `set` checks and stores.
struct flag_spec {
  std::string_view name = {};     // "--lp_launch"
  std::string_view hint = {};     // what --lp_help shows after "=": "<policy>"
  std::string_view example = {};  // a real value, for the "needs a value" message
  std::string_view help = {};
  bool launch_flags::*on = nullptr;
  void (*set)(launch_flags&, std::string_view name, std::string value) = nullptr;
};

inline constexpr flag_spec flag_table[] = {
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
           f.terminal = word == "current" ? terminal_kind::current
                        : word == "files" ? terminal_kind::files
                                          : terminal_kind::tmux;
         }},
    {.name = "--lp_python",
     .hint = "<interpreter>",
     .example = "./venv/bin/python",
     .help = "the interpreter of the program's Python nodes (default: python3 on PATH)",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.python = one_line(name, std::move(v)); }},
    {.name = "--lp_log_dir",
     .hint = "<dir>",
     .example = "./logs",
     .help = "local_mp with files or tmux: the log directory (default: logs/ in the "
             "launch's run directory)",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.log_dir = std::move(v); }},
    {.name = "--lp_termination_notice_secs",
     .hint = "<n>",
     .example = "30",
     .help = "local_mp: seconds a node has to stop before it is killed (0 to 86400, "
             "default 10)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.termination_notice_secs = static_cast<int>(whole_number(name, v, 0, 86400));
         }},
    {.name = "--lp_max_body_mb",
     .hint = "<n>",
     .example = "1024",
     .help = "the largest request body a node accepts, in MiB; larger ones get 413 (1 to "
             "1048576, default 256)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.max_body_mb = static_cast<std::size_t>(whole_number(name, v, 1, 1 << 20));
         }},
    {.name = "--lp_header_timeout_secs",
     .hint = "<n>",
     .example = "30",
     .help = "seconds a request's headers may take from its first byte; a slower "
             "request gets 408 and its connection closes (1 to 3600, default 10)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.header_timeout_secs = static_cast<int>(whole_number(name, v, 1, 3600));
         }},
    {.name = "--lp_min_rate_kib_per_sec",
     .hint = "<n>",
     .example = "16",
     .help = "the slowest a peer may send a body or read a reply, in KiB/s on average "
             "after the header time; slower ones are cut off (1 to 1048576, default 64)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.min_rate_kib_per_sec =
               static_cast<std::size_t>(whole_number(name, v, 1, 1 << 20));
         }},
    {.name = "--lp_max_connections",
     .hint = "<n>",
     .example = "16384",
     .help =
         "open connections per node, idle or not; more are answered 503 and closed (16 "
         "to 1048576, default 8192, at most half of ulimit -n)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.max_connections =
               static_cast<std::size_t>(whole_number(name, v, 16, 1 << 20));
         }},
    {.name = "--lp_insecure",
     .help = "accept calls without the launch's secret (warns)",
     .on = &launch_flags::insecure},
    {.name = "--lp_tls",
     .hint = "<mode>",
     .example = "on",
     .help =
         "TLS between nodes, with a certificate made per launch that every peer must "
         "hold: on, off (warns where nodes serve beyond loopback) or auto (the default: "
         "on where they do, as under slurm)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.tls = one_of(name, std::move(v), {"on", "off", "auto"});
         }},
    {.name = "--lp_tls_cert",
     .hint = "<file>",
     .example = "./node.crt",
     .help =
         "a site's own certificate (PEM) for TLS, instead of one made per launch; needs "
         "its key (below), and turns TLS on",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.tls_cert = std::move(v); }},
    {.name = "--lp_tls_key",
     .hint = "<file>",
     .example = "./node.key",
     .help = "the private key (PEM, unencrypted) of that certificate",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.tls_key = std::move(v); }},
    {.name = "--lp_tls_ca",
     .hint = "<file>",
     .example = "./site-ca.crt",
     .help = "the CA (PEM) that peers' certificates must verify against, instead of that "
             "certificate itself",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.tls_ca = std::move(v); }},
    {.name = "--lp_system_malloc",
     .help =
         "leave malloc as it is set; by default a process that hosts nodes keeps freed "
         "blocks up to 64 MiB (glibc's mallopt), as fresh pages for each large value "
         "cost "
         "more than sending it",
     .on = &launch_flags::system_malloc},
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
               std::string v) { f.checkpoint_dir = std::move(v); }},
    {.name = "--lp_resume",
     .hint = "<dir>",
     .example = "/home/me/.local/state/launchpad/checkpoints/prog/2026-01-31_09-00-00",
     .help =
         "restore each node with checkpoints from this directory of an earlier launch, "
         "unless its own checkpoint in this launch's checkpoint directory is newer; it "
         "must hold a checkpoint of a node of this program",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.resume = std::move(v); }},
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
           f.gpus = std::move(v);
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
           f.status_port =
               v == "off" ? port_or_off{} : port_or_off{static_cast<int>(std::stol(v))};
         }},
    {.name = "--lp_status_linger_secs",
     .hint = "<n>",
     .example = "60",
     .help = "keep the status page up this long after the program ends, to see how it "
             "ended (0 to 86400, default 0)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.status_linger_secs = static_cast<int>(whole_number(name, v, 0, 86400));
         }},
    {.name = "--lp_status",
     .hint = "<run_dir>",
     .example = "/tmp/lp-counter-Ab12Cd",
     .help = "print the nodes of the running launch whose run directory this is, with "
             "their figures, and exit",
     .set = [](launch_flags& f, std::string_view,
               std::string v) { f.status_of = std::move(v); }},
    {.name = "--lp_json",
     .help = "print the status above as JSON instead of a table",
     .on = &launch_flags::json},
    {.name = "--lp_slurm_partition",
     .hint = "<p>",
     .example = "gpu",
     .help = "slurm: the job's partition (default: the cluster's default partition)",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.slurm_partition = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_time",
     .hint = "<limit>",
     .example = "2:00:00",
     .help = "slurm: the job's time limit, in Slurm's format (30, 2:00:00, 1-0)",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.slurm_time = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_account",
     .hint = "<a>",
     .example = "my_project",
     .help = "slurm: the account the job is charged to",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.slurm_account = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_sbatch",
     .hint = "<option>",
     .example = "--qos=high",
     .help = "slurm: one more sbatch option, e.g. --qos=high (repeat the flag for more)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           auto option = script_safe(name, std::move(v));
           if (!option.starts_with("--"))
             throw usage_error(
                 "--lp_slurm_sbatch=" + option +
                 ": give one sbatch option, e.g. --lp_slurm_sbatch=--qos=high");
           f.slurm_sbatch.push_back(std::move(option));
         }},
    {.name = "--lp_slurm_dir",
     .hint = "<dir>",
     .example = "/shared/lp-slurm",
     .help = "slurm: where run directories go; the compute hosts must see it at the same "
             "path (default: ./lp-slurm)",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.slurm_dir = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_host",
     .hint = "<h>",
     .example = "ib0",
     .help = "slurm: the address nodes listen on: auto (the host's own, the default), an "
             "interface (ib0) or an address",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.slurm_host = script_safe(name, std::move(v)); }},
    {.name = "--lp_slurm_detach",
     .help = "slurm: submit, print the job id and return",
     .on = &launch_flags::slurm_detach},
    {.name = "--lp_kube_image",
     .hint = "<image>",
     .example = "registry.example.com/team/prog:1.0",
     .help = "kubernetes: the container image every pod runs; it holds this program's "
             "binary (required)",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.kube_image = image_reference(name, std::move(v)); }},
    {.name = "--lp_kube_namespace",
     .hint = "<ns>",
     .example = "research",
     .help = "kubernetes: the namespace of the launch's objects (default: default)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           f.kube_namespace = dns_label_value(name, std::move(v));
         }},
    {.name = "--lp_kube_binary",
     .hint = "<path>",
     .example = "/opt/prog/bin/prog",
     .help = "kubernetes: where the program's binary is in the image (default: "
             "/usr/local/bin/ and the name of this binary)",
     .set =
         [](launch_flags& f, std::string_view name, std::string v) {
           if (!v.starts_with("/"))
             throw usage_error(std::string(name) + "=" + one_line(name, v) +
                               ": give the binary's absolute path in the image, e.g. " +
                               std::string(name) + "=/usr/local/bin/prog");
           f.kube_binary = one_line(name, std::move(v));
         }},
    {.name = "--lp_kube_dir",
     .hint = "<dir>",
     .example = "./manifests",
     .help =
         "kubernetes: where a dry run writes the launch's manifests, in a directory of "
         "their own (default: ./lp-kube)",
     .set = [](launch_flags& f, std::string_view name,
               std::string v) { f.kube_dir = one_line(name, std::move(v)); }},
    {.name = "--lp_dry_run",
     .help = "slurm: print the batch script and each node's command line, and submit "
             "nothing; kubernetes: write the manifests to files, for kubectl apply -k",
     .on = &launch_flags::dry_run},
    {.name = "--lp_help", .help = "print this help and exit", .on = &launch_flags::help},
};

// Checked where the table is compiled, so a row added later cannot lack what
// its messages need or shadow another row. (Whether a value row has its `set`
// is checked by tests/unit-flags.cpp: g++ with -fsanitize=undefined cannot
// compare a function pointer with null in a constant expression.)
consteval bool flag_table_is_sound() {
  for (const auto& row : flag_table) {
    bool is_switch = row.on != nullptr;
    bool has_value_words = !row.hint.empty() && !row.example.empty();
    bool has_no_value_words = row.hint.empty() && row.example.empty();
    if (!row.name.starts_with("--lp_") || row.help.empty() ||
        !(is_switch ? has_no_value_words : has_value_words))
      return false;
    for (const auto& other : flag_table)
      if (&other != &row && other.name == row.name) return false;
  }
  return true;
}
static_assert(flag_table_is_sound(),
              "each flag_table row: one --lp_ name, a help text, and "
              "either `on` or `set` with a hint and an example");

inline constexpr std::size_t help_width = 80;
inline constexpr std::size_t help_indent = 24;  // where the descriptions start

// string_view::find, but usable in constant expressions under g++'s
// -fsanitize=undefined, where libstdc++'s find is not.
constexpr std::size_t find_char(std::string_view text, char c, std::size_t from = 0) {
  for (std::size_t i = from; i < text.size(); ++i)
    if (text[i] == c) return i;
  return std::string_view::npos;
}

// Writes the --lp_help text to `put`, a character at a time. constexpr and
// without allocation (libstdc++'s constexpr std::string fails under clang 14),
// so that flags_help is fixed at compile time: measured first, then written.
template <class Put>
constexpr void write_help(Put put) {
  std::size_t column = 0;
  auto text = [&](std::string_view s) {
    for (char c : s) {
      put(c);
      column = c == '\n' ? 0 : column + 1;
    }
  };
  auto pad_to = [&](std::size_t indent) {
    while (column < indent) text(" ");
  };
  // Fills lines from `indent` to help_width, breaking between words.
  auto paragraph = [&](std::string_view words, std::size_t indent) {
    pad_to(indent);
    while (!words.empty()) {
      auto end = find_char(words, ' ');
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
  paragraph(
      "Launchpad flags (every other argument, and every argument after --, is left "
      "to the program):",
      0);
  for (const auto& row : flag_table) {
    text("  ");
    text(row.name);
    if (!row.hint.empty()) {
      text("=");
      text(row.hint);
    }
    if (column + 2 > help_indent) text("\n");
    paragraph(row.help, help_indent);
  }
  text("\n");
  paragraph(
      "A flag's value follows the = or is the next argument; a value that starts "
      "with -- must follow the =. A flag shown without =<...> is a switch: on when "
      "given alone or as =true, =1 or =yes; off as =false, =0 or =no.",
      0);
}

constexpr std::size_t help_size() {
  std::size_t size = 0;
  write_help([&](char) { ++size; });
  return size;
}

constexpr std::array<char, help_size()> help_chars() {
  std::array<char, help_size()> chars{};
  std::size_t i = 0;
  write_help([&](char c) { chars[i++] = c; });
  return chars;
}

inline constexpr auto flags_help_chars = help_chars();
inline constexpr std::string_view flags_help{flags_help_chars.data(),
                                             flags_help_chars.size()};

constexpr std::size_t longest_line(std::string_view text) {
  std::size_t longest = 0;
  for (std::size_t start = 0; start < text.size();) {
    auto end = find_char(text, '\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (end - start > longest) longest = end - start;
    start = end + 1;
  }
  return longest;
}
static_assert(longest_line(flags_help) <= help_width,
              "a --lp_help line is wider than 80 columns: shorten a word or a name");

inline const flag_spec* find_flag(std::string_view name) {
  for (const auto& row : flag_table)
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

inline usage_error needs_value(const flag_spec& flag, const char* next) {
  std::string message = std::string(flag.name) + " needs a value, e.g. " +
                        std::string(flag.name) + "=" + std::string(flag.example);
  // The next word is the user's flag, or a value that only = can carry.
  if (next && std::string_view(next).starts_with("--") && std::string_view(next) != "--")
    message += "; a value that starts with -- must follow the =";
  return usage_error(message);
}

// The TLS flags that must go together (docs/launching.md, "Flags"): checked
// by a launch once every flag is read, as each row reads one flag alone.
inline void check_tls_flags(const launch_flags& flags) {
  if (flags.tls_cert.empty() != flags.tls_key.empty())
    throw usage_error(
        "--lp_tls_cert and --lp_tls_key go together: give a certificate and "
        "its key");
  if (!flags.tls_ca.empty() && flags.tls_cert.empty())
    throw usage_error(
        "--lp_tls_ca needs --lp_tls_cert and --lp_tls_key: the certificate it "
        "signed, and its key");
  if (flags.tls == "off" && !flags.tls_cert.empty())
    throw usage_error("--lp_tls=off and --lp_tls_cert contradict each other: drop one");
}

// `words` (argv, argv[0] first) without the --lp_ flags named in `dropped`,
// in each form parse_flags reads: "--f", "--f=v", and a value flag's
// "--f v". What follows "--" is the user's, and stays.
inline std::vector<std::string> without_flags(
    const std::vector<std::string>& words,
    std::initializer_list<std::string_view> dropped) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    if (i > 0 && word == "--") {
      kept.insert(kept.end(), words.begin() + static_cast<std::ptrdiff_t>(i),
                  words.end());
      break;
    }
    auto name = word.substr(0, word.find('='));
    bool drop = false;
    for (auto flag : dropped) drop = drop || (i > 0 && name == flag);
    if (!drop) {
      kept.emplace_back(word);
      continue;
    }
    const flag_spec* spec = find_flag(name);
    bool value_follows = spec && !spec->on && name.size() == word.size();
    if (value_follows && i + 1 < words.size() && !words[i + 1].starts_with("--")) ++i;
  }
  return kept;
}

inline launch_flags parse_flags(int argc, char** argv) {
  launch_flags flags;
  for (int i = 0; i < argc; ++i) flags.arguments.emplace_back(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--lp_")) continue;
    auto equals = arg.find('=');
    const flag_spec* flag = find_flag(arg.substr(0, equals));
    if (!flag)
      throw usage_error("unknown flag " + std::string(arg.substr(0, equals)) +
                        "; run with --lp_help to list Launchpad's flags");
    std::optional<std::string_view> value;
    if (equals != std::string_view::npos) value = arg.substr(equals + 1);
    if (flag->on) {
      // A switch never takes the next word, which may be the user's.
      flags.*(flag->on) = !value || switch_value(flag->name, *value);
      continue;
    }
    if (!value) {
      const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
      if (next && !std::string_view(next).starts_with("--")) value = argv[++i];
      if (!value) throw needs_value(*flag, next);
    }
    if (value->empty()) throw needs_value(*flag, nullptr);
    flag->set(flags, flag->name, std::string(*value));
  }
  return flags;
}

}  // namespace lp::detail
