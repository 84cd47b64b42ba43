#pragma once

// The --lp_ flags every launch shares, as rows that read them into
// launch_settings and write them back; a launch policy's own are in a file
// of their own (slurm_flags.hpp, kube_flags.hpp). Every other argument
// belongs to the user and is left alone.

#include <array>
#include <chrono>
#include <cstddef>
#include <launchpad/detail/cli/flag_row.hpp>
#include <launchpad/detail/named_policies.hpp>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/settings/launch_settings.hpp>
#include <launchpad/detail/util/text.hpp>
#include <launchpad/error.hpp>
#include <string>
#include <string_view>
#include <utility>

namespace lp::detail {

// --lp_shared_memory_mb's help names the metric that counts the calls past
// its cap.
inline constexpr std::string_view shared_memory_mb_help_parts[] = {
    "the most shared memory, in MiB, that a process lends its peers on this host for "
    "large arrays at once; past it a call's arrays go through the socket, counted in ",
    protocol::metric::shared_memory_fallbacks_total.name,
    " (0 to 1048576, 0: none, default 256)"};
inline constexpr auto shared_memory_mb_help =
    join_help<joined_length(shared_memory_mb_help_parts)>(shared_memory_mb_help_parts);

// The policy that --lp_launch names: one of named_policies (not test_mp,
// which only a test's lp::controller starts).
template <class... Named>
policy_kind launch_policy_named(policy_list<Named...>, std::string_view flag,
                                const std::string& value) {
  if (((value == Named::flag) || ...)) return *policy_named(value);
  throw usage_error(
      std::string(flag) + "=" + value + " is not a launch policy; choose " +
      choices_text(std::array<std::string_view, sizeof...(Named)>{Named::flag...}));
}

inline flag_words number_word(long number) {
  return {std::to_string(number)};
}

inline constexpr flag_row launch_flag_rows[] = {
    {.name = "--lp_launch",
     .hint = "<policy>",
     .example = "local_mp",
     .help = "how to run the program: test_mt, local_mt, local_mp, slurm or kubernetes "
             "(default: the policy main() names, else local_mt)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.launch = launch_policy_named(named_policies{}, name, v);
         },
     .get = [](const launch_settings& s) -> flag_words {
       if (!s.launch) return {};
       return {std::string(name_of(*s.launch))};
     }},
    {.name = "--lp_terminal",
     .hint = "<where>",
     .example = "files",
     .help = "local_mp: where node output goes: current (this terminal, each line "
             "prefixed), files (one log per node) or tmux (logs, and a tmux window "
             "following each)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           auto word = one_of(name, std::move(v), {"current", "files", "tmux"});
           s.process.terminal = word == "current" ? terminal_kind::current
                                : word == "files" ? terminal_kind::files
                                                  : terminal_kind::tmux;
         },
     .get = [](const launch_settings& s) -> flag_words {
       auto where = s.process.terminal;
       return {where == terminal_kind::current ? "current"
               : where == terminal_kind::files ? "files"
                                               : "tmux"};
     }},
    {.name = "--lp_python",
     .hint = "<interpreter>",
     .example = "./venv/bin/python",
     .help = "the interpreter of the program's Python nodes (default: python3 on PATH)",
     .set = [](launch_settings& s, std::string_view name,
               std::string v) { s.process.python = one_line(name, std::move(v)); },
     .get = [](const launch_settings& s) -> flag_words { return {s.process.python}; }},
    {.name = "--lp_log_dir",
     .hint = "<dir>",
     .example = "./logs",
     .help = "local_mp with files or tmux: the log directory (default: logs/ in the "
             "launch's run directory)",
     .set = [](launch_settings& s, std::string_view,
               std::string v) { s.process.log_dir = std::move(v); },
     .get = [](const launch_settings& s) -> flag_words { return {s.process.log_dir}; }},
    {.name = "--lp_termination_notice_secs",
     .hint = "<n>",
     .example = "30",
     .help = "local_mp: seconds a node has to stop before it is killed (0 to 86400, "
             "default 10)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.process.termination_notice_secs =
               static_cast<int>(whole_number(name, v, 0, 86400));
         },
     .get =
         [](const launch_settings& s) {
           return number_word(s.process.termination_notice_secs);
         }},
    {.name = "--lp_max_body_mb",
     .hint = "<n>",
     .example = "1024",
     .help = "the largest request body a node accepts, in MiB; larger ones get 413 (1 to "
             "1048576, default 256)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.server.max_body_mb =
               static_cast<std::size_t>(whole_number(name, v, 1, 1 << 20));
         },
     .get =
         [](const launch_settings& s) {
           return number_word(static_cast<long>(s.server.max_body_mb));
         }},
    {.name = "--lp_header_timeout_secs",
     .hint = "<n>",
     .example = "30",
     .help = "seconds a request's headers may take from its first byte; a slower "
             "request gets 408 and its connection closes (1 to 3600, default 10)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.server.limits.header_timeout =
               std::chrono::seconds(whole_number(name, v, 1, 3600));
         },
     .get =
         [](const launch_settings& s) {
           return number_word(std::chrono::duration_cast<std::chrono::seconds>(
                                  s.server.limits.header_timeout)
                                  .count());
         }},
    {.name = "--lp_min_rate_kib_per_sec",
     .hint = "<n>",
     .example = "16",
     .help = "the slowest a peer may send a body or read a reply, in KiB/s on average "
             "after the header time; slower ones are cut off (1 to 1048576, default 64)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.server.limits.min_bytes_per_second =
               static_cast<std::size_t>(whole_number(name, v, 1, 1 << 20)) << 10;
         },
     .get =
         [](const launch_settings& s) {
           return number_word(
               static_cast<long>(s.server.limits.min_bytes_per_second >> 10));
         }},
    {.name = "--lp_max_connections",
     .hint = "<n>",
     .example = "16384",
     .help =
         "open connections per node, idle or not; more are answered 503 and closed (16 "
         "to 1048576, default 8192, at most half of ulimit -n)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.server.limits.max_connections =
               static_cast<std::size_t>(whole_number(name, v, 16, 1 << 20));
         },
     .get =
         [](const launch_settings& s) {
           return number_word(static_cast<long>(s.server.limits.max_connections));
         }},
    {.name = "--lp_insecure",
     .help = "accept calls without the launch's secret (warns)",
     .on = [](launch_settings& s) -> bool& { return s.process.insecure; }},
    {.name = "--lp_tls",
     .hint = "<mode>",
     .example = "on",
     .help =
         "TLS between nodes, with a certificate made per launch that every peer must "
         "hold: on, off (warns where nodes serve beyond loopback) or auto (the default: "
         "on where they do, as under slurm)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           auto word = one_of(name, std::move(v), {"on", "off", "auto"});
           s.tls.mode = word == "on"    ? tls_mode::on
                        : word == "off" ? tls_mode::off
                                        : tls_mode::automatic;
         },
     .get = [](const launch_settings& s) -> flag_words {
       return {s.tls.mode == tls_mode::on    ? "on"
               : s.tls.mode == tls_mode::off ? "off"
                                             : "auto"};
     }},
    {.name = "--lp_tls_cert",
     .hint = "<file>",
     .example = "./node.crt",
     .help =
         "a site's own certificate (PEM) for TLS, instead of one made per launch; needs "
         "its key (below), and turns TLS on",
     .to_children = false,
     .set = [](launch_settings& s, std::string_view,
               std::string v) { s.tls.cert = std::move(v); },
     .get = [](const launch_settings& s) -> flag_words { return {s.tls.cert}; }},
    {.name = "--lp_tls_key",
     .hint = "<file>",
     .example = "./node.key",
     .help = "the private key (PEM, unencrypted) of that certificate",
     .to_children = false,
     .set = [](launch_settings& s, std::string_view,
               std::string v) { s.tls.key = std::move(v); },
     .get = [](const launch_settings& s) -> flag_words { return {s.tls.key}; }},
    {.name = "--lp_tls_ca",
     .hint = "<file>",
     .example = "./site-ca.crt",
     .help = "the CA (PEM) that peers' certificates must verify against, instead of that "
             "certificate itself",
     .to_children = false,
     .set = [](launch_settings& s, std::string_view,
               std::string v) { s.tls.ca = std::move(v); },
     .get = [](const launch_settings& s) -> flag_words { return {s.tls.ca}; }},
    {.name = "--lp_shared_memory_mb",
     .hint = "<n>",
     .example = "1024",
     .help = shared_memory_mb_help.view(),
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.same_host.shared_memory_mb =
               static_cast<std::size_t>(whole_number(name, v, 0, 1 << 20));
         },
     .get =
         [](const launch_settings& s) {
           return number_word(static_cast<long>(s.same_host.shared_memory_mb));
         }},
    {.name = "--lp_system_malloc",
     .help =
         "leave malloc as it is set; by default a process that hosts nodes keeps freed "
         "blocks up to 128 MiB while busy (glibc's mallopt), as fresh pages for each "
         "large value cost more than sending it, and gives free memory back once the "
         "threads of a load retire",
     .on = [](launch_settings& s) -> bool& { return s.process.system_malloc; }},
    {.name = "--lp_same_host",
     .hint = "<mode>",
     .example = "off",
     .help = "on (the default): a node also serves on a unix socket in the run "
             "directory, which callers on its host take instead of TCP, their large "
             "arrays through shared memory (local_mp, test_mp, local_mt, slurm; "
             "kubernetes: in the pod's emptyDir); off: TCP alone",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.process.same_host =
               one_of(name, std::move(v),
                      {protocol::same_host::flag_on, protocol::same_host::flag_off}) ==
               protocol::same_host::flag_on;
         },
     .get = [](const launch_settings& s) -> flag_words {
       return {s.process.same_host ? protocol::same_host::flag_on
                                   : protocol::same_host::flag_off};
     }},
    {.name = "--lp_graph",
     .hint = "<format>",
     .example = "dot",
     .help = "print the program graph (dot, mermaid or json) and exit",
     .to_children = false,
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.graph = one_of(name, std::move(v),
                            {"dot", "mermaid", protocol::graph_json::format});
         },
     .get = [](const launch_settings& s) -> flag_words { return {s.graph}; }},
    {.name = "--lp_checkpoint_dir",
     .hint = "<dir>",
     .example = "./checkpoints",
     .help =
         "where nodes with lp_save/lp_restore keep their checkpoints (default: a new "
         "directory per launch, named by its start time, in "
         "~/.local/state/launchpad/checkpoints/<program>/, or under $XDG_STATE_HOME if "
         "set; slurm: checkpoints/ in the run directory)",
     .set = [](launch_settings& s, std::string_view,
               std::string v) { s.checkpoints.dir = std::move(v); },
     .get = [](const launch_settings& s) -> flag_words { return {s.checkpoints.dir}; }},
    {.name = "--lp_resume",
     .hint = "<dir>",
     .example = "/home/me/.local/state/launchpad/checkpoints/prog/2026-01-31_09-00-00",
     .help =
         "restore each node with checkpoints from this directory of an earlier launch, "
         "unless its own checkpoint in this launch's checkpoint directory is newer; it "
         "must hold a checkpoint of a node of this program",
     .set = [](launch_settings& s, std::string_view,
               std::string v) { s.checkpoints.resume = std::move(v); },
     .get = [](const launch_settings& s) -> flag_words {
       return {s.checkpoints.resume};
     }},
    {.name = "--lp_gpus",
     .hint = "<list>",
     .example = "0,1,2,3",
     .help =
         "local_mp: the GPU indices to hand out to groups with resources({.gpus = n}), "
         "through CUDA_VISIBLE_DEVICES (default: the devices found in /dev/nvidia*)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           for (auto index : split(v, ','))
             whole_number(name, std::string(index), 0, 1023);
           s.process.gpus = std::move(v);
         },
     .get = [](const launch_settings& s) -> flag_words { return {s.process.gpus}; }},
    {.name = "--lp_status_port",
     .hint = "<port>",
     .example = "8080",
     .help = "local_mt, local_mp, slurm: the port of the launcher's status page on "
             "127.0.0.1 (default 0: any free one; off: no page)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           if (v != "off" && (v.empty() || v.size() > 5 ||
                              v.find_first_not_of("0123456789") != std::string::npos ||
                              std::stol(v) > 65535))
             throw usage_error(std::string(name) + "=" + v +
                               ": give a port from 0 to 65535, or off");
           s.status.port =
               v == "off" ? port_or_off{} : port_or_off{static_cast<int>(std::stol(v))};
         },
     .get = [](const launch_settings& s) -> flag_words {
       if (!s.status.port.number) return {"off"};
       return number_word(*s.status.port.number);
     }},
    {.name = "--lp_status_linger_secs",
     .hint = "<n>",
     .example = "60",
     .help = "keep the status page up this long after the program ends, to see how it "
             "ended (0 to 86400, default 0)",
     .set =
         [](launch_settings& s, std::string_view name, std::string v) {
           s.status.linger_secs = static_cast<int>(whole_number(name, v, 0, 86400));
         },
     .get = [](const launch_settings& s) { return number_word(s.status.linger_secs); }},
    {.name = "--lp_status",
     .hint = "<run_dir>",
     .example = "/tmp/lp-counter-Ab12Cd",
     .help = "print the nodes of the running launch whose run directory this is, with "
             "their figures, and exit",
     .to_children = false,
     .set = [](launch_settings& s, std::string_view,
               std::string v) { s.status.of = std::move(v); },
     .get = [](const launch_settings& s) -> flag_words { return {s.status.of}; }},
    {.name = "--lp_json",
     .help = "print the status above as JSON instead of a table",
     .to_children = false,
     .on = [](launch_settings& s) -> bool& { return s.status.json; }},
};

// Shared too, and --lp_help lists them last, after every launcher's own
// flags: what to do instead of a launch.
inline constexpr flag_row closing_flag_rows[] = {
    {.name = "--lp_dry_run",
     .help = "slurm: print the batch script and each node's command line, and submit "
             "nothing; kubernetes: write the manifests to files, for kubectl apply -k",
     .to_children = false,
     .on = [](launch_settings& s) -> bool& { return s.dry_run; }},
    {.name = "--lp_help",
     .help = "print this help and exit",
     .to_children = false,
     .on = [](launch_settings& s) -> bool& { return s.help; }},
};

}  // namespace lp::detail
