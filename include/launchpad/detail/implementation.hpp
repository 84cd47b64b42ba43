#pragma once

// The library's compiled part: the definitions of what its headers declare
// LP_API (docs/concepts.md, "How the library is built"). Each header's share
// sits in impl/<header>_inl.hpp beside it, which includes its header; this
// file gathers them all, so that the part is whole wherever it is compiled,
// whichever public headers a file included and in whatever order. It is
// included in one place: at the end of launch.hpp, where detail/config.hpp
// says the compiled part is defined (LP_DETAIL_DEFINE_COMPILED_PART): inline
// by default, or in the one file that defines LP_IMPLEMENTATION (the meson
// and CMake libraries' src/compiled_part.cpp).

// The compiled part reads and writes JSON (bodies, describe, the
// rendezvous): it alone needs nlohmann's header, and its headers (servers,
// launchers) are read after it. A user's code sees only its declarations
// (<nlohmann/json_fwd.hpp>), unless it includes <launchpad/json.hpp> to use
// lp::json as a wire type.
#include <nlohmann/json.hpp>

#include <launchpad/detail/cli/impl/command_line_inl.hpp>
#include <launchpad/detail/host/impl/controlled_launch_inl.hpp>
#include <launchpad/detail/host/impl/in_process_inl.hpp>
#include <launchpad/detail/kube/impl/launch_inl.hpp>
#include <launchpad/detail/kube/impl/submit_inl.hpp>
#include <launchpad/detail/observe/impl/exposition_inl.hpp>
#include <launchpad/detail/observe/impl/node_metrics_inl.hpp>
#include <launchpad/detail/observe/impl/process_figures_inl.hpp>
#include <launchpad/detail/os/impl/launch_tls_inl.hpp>
#include <launchpad/detail/os/impl/run_directory_inl.hpp>
#include <launchpad/detail/process/impl/node_process_inl.hpp>
#include <launchpad/detail/process/impl/process_options_inl.hpp>
#include <launchpad/detail/python/impl/python_node_inl.hpp>
#include <launchpad/detail/serve/impl/dispatch_inl.hpp>
#include <launchpad/detail/serve/impl/method_list_inl.hpp>
#include <launchpad/detail/serve/impl/typed_node_inl.hpp>
#include <launchpad/detail/slurm/impl/launch_inl.hpp>
#include <launchpad/detail/status/impl/status_command_inl.hpp>
#include <launchpad/detail/status/impl/status_server_inl.hpp>
#include <launchpad/detail/tls/impl/context_inl.hpp>
#include <launchpad/detail/tls/impl/credentials_inl.hpp>
#include <launchpad/detail/tls/impl/session_inl.hpp>
#include <launchpad/detail/util/impl/malloc_tuning_inl.hpp>
#include <launchpad/detail/util/impl/type_name_inl.hpp>
#include <launchpad/detail/wire/impl/arguments_inl.hpp>
#include <launchpad/detail/wire/impl/cbor_decode_inl.hpp>
#include <launchpad/detail/wire/impl/cbor_encode_inl.hpp>
#include <launchpad/detail/wire/impl/cbor_reader_inl.hpp>
#include <launchpad/detail/wire/impl/decode_error_inl.hpp>
#include <launchpad/detail/wire/impl/json_decode_inl.hpp>
#include <launchpad/detail/wire/impl/json_encode_inl.hpp>
#include <launchpad/detail/wire/impl/kind_inl.hpp>
#include <launchpad/detail/wire/impl/protocol_inl.hpp>
#include <launchpad/detail/wire/impl/result_inl.hpp>
#include <launchpad/detail/wire/impl/schema_inl.hpp>
#include <launchpad/detail/wire/impl/typed_array_inl.hpp>
#include <launchpad/detail/wire/impl/utf8_inl.hpp>
#include <launchpad/impl/context_inl.hpp>
#include <launchpad/impl/error_inl.hpp>
#include <launchpad/impl/launch_inl.hpp>
#include <launchpad/impl/program_inl.hpp>
