"""The command line, read as Launchpad reads it: the absl flag
--lp_launch_type (launch()'s default launch type) and
--lp_termination_notice_secs, defined when `launchpad` is imported; the
terminal from launch(terminal=...) or LAUNCHPAD_LAUNCH_LOCAL_TERMINAL, in
Launchpad's names. The library's own --lp_* flags on the script's command
line (--lp_tls=on, --lp_terminal=files, --lp_slurm_partition gpu;
docs/launching.md) go to lp-launchpad, and each is defined as an absl flag
too (a string for one that takes a value, a bool for a switch), so that
absl's app.run does not refuse the command line. A value follows the flag's
`=` or is the next word, as absl and the launcher read them; which flags
take one the launcher says (`lp-launchpad --lp_help`), asked only when a
flag without `=` is followed by a word. Without absl, the command line is
read the same way."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from launchpad_client import _protocol as protocol

try:
    from absl import flags as _absl_flags
except ImportError:  # absl is optional: launch(launch_type=...) works without it
    _absl_flags = None

LAUNCH_TYPES = ("local_mt", "local_mp", "test_mt", "test_mp", "slurm", "kubernetes")
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


def launcher() -> str:
    """The path of lp-launchpad: LP_LAUNCHPAD_LAUNCHER's, else PATH's."""
    named = os.environ.get(protocol.LAUNCHPAD_DESCRIPTION_LAUNCHER_VARIABLE)
    if named:
        return named
    found = shutil.which(protocol.LAUNCHPAD_DESCRIPTION_LAUNCHER)
    if found:
        return found
    raise FileNotFoundError(f"no {protocol.LAUNCHPAD_DESCRIPTION_LAUNCHER} launcher: install "
                            "the library (meson install puts it on PATH) or name its path in "
                            f"{protocol.LAUNCHPAD_DESCRIPTION_LAUNCHER_VARIABLE}")


_taking_values: frozenset[str] | None = None  # the launcher's answer, once asked


def _takes_value(name: str) -> bool:
    """Whether --`name` takes a value (else it is a switch): Launchpad's own
    --lp_launch_type, or a flag the launcher's --lp_help lists with `=`."""
    global _taking_values
    if name == "lp_launch_type":
        return True
    if _taking_values is None:
        try:
            listed = subprocess.run([launcher(), "--lp_help"], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            listed = ""  # no launcher: launch() will say so; meanwhile, switches
        _taking_values = frozenset(re.findall(r"^  --(lp_\w+)=", listed, re.MULTILINE))
    return name in _taking_values


def lp_flags(words: list[str]) -> list[tuple[str, str | None]]:
    """The --lp_ flags among `words` (the script's arguments), each with its
    value: after its `=`, or the next word for a flag that takes one (a word
    that is no flag); None for a switch. Words after `--` are the script's."""
    found: list[tuple[str, str | None]] = []
    i = 0
    while i < len(words) and words[i] != "--":
        named = _named(words[i])
        i += 1
        if named is None:
            continue
        name, value = named
        if (value is None and i < len(words) and not words[i].startswith("--")
                and _takes_value(name)):
            value = words[i]
            i += 1
        found.append((name, value))
    return found


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
    for name, value in lp_flags(sys.argv[1:]):
        if name in FLAGS:
            continue
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
    for name, given in lp_flags(sys.argv[1:]):
        if name == "lp_launch_type" and given:
            return given
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
    """The --lp_* flags for lp-launchpad: the script's own, each one word
    (--lp_x=value, or a switch; but the launch type, which launch() says),
    and the terminal."""
    words = [f"--{name}" if value is None else f"--{name}={value}"
             for name, value in lp_flags(sys.argv[1:])
             if name not in ("lp_launch_type", "lp_launch")]
    chosen = _terminal(terminal)
    if chosen is not None:
        words = [w for w in words if not w.startswith("--lp_terminal=")]
        words.append(f"--lp_terminal={chosen}")
    return words
