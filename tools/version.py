#!/usr/bin/env python3
"""Prints the library version written in include/launchpad/version.hpp (for meson)."""
import re
from pathlib import Path

text = (Path(__file__).resolve().parent.parent / "include/launchpad/version.hpp").read_text()
parts = [re.search(rf"#define LP_VERSION_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
print(".".join(parts))
