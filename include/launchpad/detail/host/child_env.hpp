#pragma once

// What a node process learns from its launcher, through the environment
// (never argv, which every user of the machine can read). The secret and
// the TLS credentials are not among them: the node reads those from the run
// directory's files (run_directory::credentials_of).

namespace lp::detail::child_env {

inline constexpr const char* nodes = "LP_NODES";  // labels to host, comma-separated
inline constexpr const char* rendezvous = "LP_RENDEZVOUS";
inline constexpr const char* launcher = "LP_LAUNCHER_PID";
inline constexpr const char* policy = "LP_POLICY";
inline constexpr const char* run_dir = "LP_RUN_DIR";
// "direct" when the launch's policy is direct_calls<...>: the launcher's
// choice, which a test's node program may not know at compile time.
inline constexpr const char* transport = "LP_TRANSPORT";
// The cores to pin to and the GPUs handed out (local_mp's placement).
inline constexpr const char* cores = "LP_CORES";
inline constexpr const char* gpus = "LP_GPUS";

}  // namespace lp::detail::child_env
