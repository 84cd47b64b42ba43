"""The command line, read as Launchpad reads it: the absl flag
--lp_launch_type (launch()'s default launch type) and
--lp_termination_notice_secs, defined when `launchpad` is imported; the
terminal from launch(terminal=...) or LAUNCHPAD_LAUNCH_LOCAL_TERMINAL, in
Launchpad's names. The library's own --lp_* flags on the script's command
line (--lp_tls=on, --lp_terminal=files, --lp_slurm_partition=...;
docs/launching.md) go to lp-launchpad as given, and each is defined as an
absl flag too (a string for --lp_x=value, a bool for a bare --lp_x), so
that absl's app.run does not refuse the command line. Without absl, the
command line is read the same way."""

from __future__ import annotations

import os
import sys

try:
    from absl import flags as _absl_flags
except ImportError:  # absl is optional: launch(launch_type=...) works without it
    _absl_flags = None

LAUNCH_TYPES = ("local_mt", "local_mp", "test_mt", "test_mp", "slurm")
DEFAULT_LAUNCH_TYPE = "local_mt"  # Launchpad's

# Launchpad's terminals, as the library's --lp_terminal names them; the
# windows of X terminals have no counterpart (docs/coming_from_launchpad.md).
TERMINALS = {"current_terminal": "current", "output_to_files": "files", "tmux_session": "tmux",
             "current": "current", "files": "files", "tmux": "tmux"}
TERMINAL_VARIABLE = "LAUNCHPAD_LAUNCH_LOCAL_TERMINAL"  # Launchpad's



def _named(word: str) -> tuple[str, str | None] | None:
    """('lp_x', value or None) for a word --lp_x[=value] or -lp_x[=value]."""
    bare = word[2:] if word.startswith("--") else word[1:] if word.startswith("-") else ""
    if not bare.startswith("lp_"):
        return None
    name, equals, value = bare.partition("=")
    return name, value if equals else None


def _define() -> None:
    if _absl_flags is None:
        return
    FLAGS = _absl_flags.FLAGS
    if "lp_launch_type" not in FLAGS:
        _absl_flags.DEFINE_enum("lp_launch_type", DEFAULT_LAUNCH_TYPE, list(LAUNCH_TYPES),
                                "How to launch a Launchpad program when launch() is called",
                                allow_override=True)
    if "lp_termination_notice_secs" not in FLAGS:
        _absl_flags.DEFINE_integer("lp_termination_notice_secs", 10,
                                   "Seconds a node has to stop before it is killed")
    for word in sys.argv[1:]:
        named = _named(word)
        if named is None or named[0] in FLAGS:
            continue
        name, value = named
        about = "passed on to lp-launchpad (docs/launching.md)"
        if value is None:
            _absl_flags.DEFINE_boolean(name, False, about)
        else:
            _absl_flags.DEFINE_string(name, None, about)


_define()


def launch_type() -> str:
    """--lp_launch_type, as Launchpad reads it: absl parses the command line
    first if the script has not."""
    if _absl_flags is not None:
        FLAGS = _absl_flags.FLAGS
        if not FLAGS.is_parsed():
            FLAGS(sys.argv, known_only=True)
        value: str = FLAGS.lp_launch_type
        return value
    for word in sys.argv[1:]:
        named = _named(word)
        if named is not None and named[0] == "lp_launch_type" and named[1]:
            return named[1]
    return DEFAULT_LAUNCH_TYPE


def _terminal(given: str | None) -> str | None:
    chosen = given or os.environ.get(TERMINAL_VARIABLE)
    if chosen is None:
        return None
    if chosen not in TERMINALS:
        raise ValueError(f"terminal {chosen!r} is not one this launcher has: "
                         f"{', '.join(TERMINALS)} (gnome-terminal's and xterm's windows have "
                         "no counterpart; tmux_session follows each node in a tmux window)")
    return TERMINALS[chosen]


def passed_on(terminal: str | None) -> list[str]:
    """The --lp_* flags for lp-launchpad: the script's own, as given (but
    the launch type, which launch() says), and the terminal."""
    words = []
    for word in sys.argv[1:]:
        named = _named(word)
        if named is not None and named[0] not in ("lp_launch_type", "lp_launch"):
            words.append("--" + word.lstrip("-"))
    chosen = _terminal(terminal)
    if chosen is not None:
        words = [w for w in words if not w.startswith("--lp_terminal=")]
        words.append(f"--lp_terminal={chosen}")
    return words
