"""A running program: its nodes by label and by group, and its stop.

    prog = launchpad_client.attach("/tmp/lp-actor_learner-AbC123")
    prog["replay"].size()
    prog.group("actors")[2]
    prog.stop()
"""

from __future__ import annotations

import os
import re
import ssl
import time
from collections.abc import Iterable, Iterator, Mapping

from .. import _protocol as protocol
from .. import _run_directory as run_directory
from .._tls import context_of_run_dir
from .._errors import LaunchpadError
from .node import DEFAULT_MAX_REPLY, DEFAULT_TIMEOUT, Node, WireFormat

_MEMBER = re.compile(r"(.+)/(\d+)")  # a group's node: "actors/3"


class Program:
    """The nodes of one launch. `prog[label]` is a Node; `prog.group(name)`
    the nodes of a group in index order. Nodes describe themselves when
    first used."""

    def __init__(self, urls: Mapping[str, str], secret: str | None = None, *,
                 run_dir: str | None = None, name: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, max_reply_bytes: int = DEFAULT_MAX_REPLY,
                 format: WireFormat | None = None,
                 tls: ssl.SSLContext | None = None) -> None:
        self.run_dir = run_dir
        self._name = name
        self._nodes = {
            label: Node(url, secret, label=label, timeout=timeout,
                        max_reply_bytes=max_reply_bytes, format=format, tls=tls)
            for label, url in sorted(urls.items())
        }

    @property
    def name(self) -> str | None:
        """The program's name (from its run directory, else from a node)."""
        if self._name is None and self._nodes:
            self._name = next(iter(self._nodes.values())).program
        return self._name

    @property
    def labels(self) -> list[str]:
        """The labels of the program's nodes, as the run directory lists them."""
        return list(self._nodes)

    @property
    def groups(self) -> list[str]:
        """The names of the program's groups (of nodes labelled `name/<i>`)."""
        return sorted({m.group(1) for m in map(_MEMBER.fullmatch, self._nodes) if m})

    def __getitem__(self, label: str) -> Node:
        try:
            return self._nodes[label]
        except KeyError:
            error = KeyError(label)
            error.add_note(f"the nodes of this program: {', '.join(self._nodes) or '(none)'}")
            raise error from None

    def __contains__(self, label: object) -> bool:
        return label in self._nodes

    def __iter__(self) -> Iterator[Node]:
        return iter(self._nodes.values())

    def __len__(self) -> int:
        return len(self._nodes)

    def __repr__(self) -> str:
        return f"<launchpad_client.Program {self._name or '?'}: {', '.join(self._nodes)}>"

    def group(self, name: str) -> list[Node]:
        """The nodes `name/0`, `name/1` ... in index order."""
        members = sorted(
            (int(m.group(2)), node)
            for label, node in self._nodes.items()
            if (m := _MEMBER.fullmatch(label)) and m.group(1) == name
        )
        if not members:
            error = KeyError(name)
            error.add_note(f"the groups of this program: {', '.join(self.groups) or '(none)'}")
            raise error
        return [node for _, node in members]

    def stop(self) -> None:
        """Asks the program to stop, as lp::stop() does from a node: every
        node's on_stop callbacks run, run()s return, calls drain. Returns once
        asked; the nodes go on stopping. Any node is asked (POST stop), the
        next one if it does not answer."""
        last: LaunchpadError | None = None
        for node in self._nodes.values():
            try:
                node._stop_program()
                return
            except LaunchpadError as error:
                last = error
        if last is None:
            raise LaunchpadError("a program of no nodes cannot be stopped")
        raise last

    def close(self) -> None:
        """Closes every node's connections."""
        for node in self._nodes.values():
            node.close()

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def attach(run_dir: str | os.PathLike[str], *, wait_for: str | Iterable[str] = (),
           startup_timeout: float = 10.0, timeout: float = DEFAULT_TIMEOUT,
           max_reply_bytes: int = DEFAULT_MAX_REPLY,
           format: WireFormat | None = None) -> Program:
    """The running program of the launch whose run directory is `run_dir` (the
    launcher prints it: "[lp] the launch's secret is in RUN_DIR/secret").

    The secret comes from `<run_dir>/secret`, TLS credentials (for nodes
    that serve beyond loopback) from `tls.crt` and `tls.key` beside it, the nodes' addresses from
    `<run_dir>/nodes`, which every node of the launch appends to once it
    serves (docs/protocol.md#introspection). Waits up to `startup_timeout` seconds for
    the labels in `wait_for` (names of groups wait for their first node), or
    for any node when none are named.
    """
    directory = os.fspath(run_dir)
    found: dict[str, str] = {}
    secret = run_directory.read_secret(directory)
    wanted = [wait_for] if isinstance(wait_for, str) else list(wait_for)

    def missing(found: Mapping[str, str]) -> list[str]:
        return [w for w in wanted if w not in found and not any(l.startswith(w + "/") for l in found)]

    give_up = time.monotonic() + startup_timeout
    while True:
        found = run_directory.node_addresses(directory)
        if (found and not missing(found)) or time.monotonic() >= give_up:
            break
        time.sleep(0.05)
    if not found:
        raise LaunchpadError(
            f"found no node addresses for {run_dir} within {startup_timeout:g} s: no node has "
            f"written its address to {os.path.join(run_dir, protocol.RUN_DIRECTORY_NODES)} yet "
            "(each does once it serves); is the program still starting, or is this another "
            "kind of directory?")
    if missing(found):
        raise LaunchpadError(f"no address for {', '.join(missing(found))} within "
                             f"{startup_timeout:g} s; found {', '.join(sorted(found))}")
    return Program(found, secret, run_dir=directory, name=run_directory.program_name(directory),
                   timeout=timeout, max_reply_bytes=max_reply_bytes, format=format,
                   tls=context_of_run_dir(directory))
