#!/usr/bin/env python3
"""Prints the library version written in include/launchpad/detail/protocol/protocol.toml (for meson)."""
import tomllib
from pathlib import Path

path = Path(__file__).resolve().parent.parent / "include/launchpad/detail/protocol/protocol.toml"
print(tomllib.loads(path.read_text())["version"])
