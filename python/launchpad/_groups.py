"""What a group of a Launchpad program asks of its launch: restarts,
resources and environment, as the C++ API's lp::node_group sets them
(program.group(label).restart_on_failure(3).resources(...).env({...})), and
Launchpad's own PythonProcess, given per group in launch(local_resources=).
launch() writes them into the program's description, and lp-launchpad sets
them on its graph, so every launch applies them as for a C++ program
(docs/coming_from_launchpad.md, "Groups: restarts, resources,
environment")."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from launchpad_client import _protocol as protocol


@dataclasses.dataclass(frozen=True)
class Resources:
    """What each process of a group asks: cores (at least 1), memory in MB
    (0: none asked) and GPUs, as lp::resources. Slurm and Kubernetes
    allocate them; local_mp pins the process to `cpus` cores and hands it
    `gpus` GPUs of its own (CUDA_VISIBLE_DEVICES)."""

    cpus: int = 1
    memory_mb: int = 0
    gpus: int = 0

    def __post_init__(self) -> None:
        for name in ("cpus", "memory_mb", "gpus"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"Resources.{name} is a whole number, not "
                                f"{type(value).__name__} {value!r}")
        if self.cpus < 1 or self.memory_mb < 0 or self.gpus < 0:
            raise ValueError(f"{self} asks fewer than 1 CPU, or negative memory or GPUs")


@dataclasses.dataclass(frozen=True)
class PythonProcess:
    """Launchpad's launch configuration of a group's processes, given as
    launch(local_resources={label: PythonProcess(env={...})}): `env` is
    added to the environment of each process of the group (under every
    launch, as program.group(label).env(...)). `args`, flags for the node's
    interpreter script in Launchpad, has no counterpart here (a node's
    process runs the library's runtime, not the script) and is refused at
    launch."""

    args: Mapping[str, str | float] = dataclasses.field(default_factory=dict)
    env: Mapping[str, str | float] = dataclasses.field(default_factory=dict)


def check_env(label: str, variables: Mapping[str, Any]) -> dict[str, str]:
    """`variables` as the description carries them (each value a str);
    raises for a name the launcher refuses (lp::node_group::env's rule)."""
    if not isinstance(variables, Mapping):
        raise TypeError(f"the environment of group {label!r} is a mapping of names to values, "
                        f"not a {type(variables).__name__}")
    checked = {}
    for name, value in variables.items():
        if not isinstance(name, str) or not name or "=" in name or name.startswith("LP_"):
            raise ValueError(f"group {label!r}: {name!r} cannot be an environment variable's "
                             "name here (empty, with '=', or LP_..., which the launch sets "
                             "itself)")
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise TypeError(f"group {label!r}: environment variable {name} is a str (or a "
                            f"number), not {type(value).__name__} {value!r}")
        checked[name] = str(value)
    return checked


@dataclasses.dataclass
class GroupSettings:
    """One group's settings as its Group sets them; None: not set."""

    max_restarts: int | None = None
    restart_backoff_ms: int = 200
    resources: Resources | None = None
    env: dict[str, str] = dataclasses.field(default_factory=dict)

    def described(self, extra_env: Mapping[str, str]) -> dict[str, Any]:
        """The group's entry in the description (protocol.toml's
        launchpad_description.groups); `extra_env` (local_resources') is
        added to the group's own."""
        key = protocol
        out: dict[str, Any] = {}
        if self.max_restarts is not None:
            out[key.LAUNCHPAD_DESCRIPTION_MAX_RESTARTS] = self.max_restarts
            out[key.LAUNCHPAD_DESCRIPTION_RESTART_BACKOFF_MS] = self.restart_backoff_ms
        if self.resources is not None:
            out[key.LAUNCHPAD_DESCRIPTION_RESOURCES] = {
                key.LAUNCHPAD_DESCRIPTION_CPUS: self.resources.cpus,
                key.LAUNCHPAD_DESCRIPTION_MEMORY_MB: self.resources.memory_mb,
                key.LAUNCHPAD_DESCRIPTION_GPUS: self.resources.gpus}
        env = {**self.env, **extra_env}
        if env:
            out[key.LAUNCHPAD_DESCRIPTION_ENV] = env
        return out
