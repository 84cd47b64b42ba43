#!/usr/bin/env python3
"""Fails unless the README's first C++ block is examples/counter/main.cpp, and
the README names the line that examples/counter/check.py (a meson test) sees
the example print."""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
readme = (root / "README.md").read_text()
block = re.search(r"```cpp\n(.*?)```", readme, re.S)
example = (root / "examples/counter/main.cpp").read_text()
if not block or block.group(1) != example:
    sys.exit("README.md's first ```cpp block differs from examples/counter/main.cpp; "
             "copy the example into the README")
printed = re.search(r'^EXPECTED = "(.*)"$', (root / "examples/counter/check.py").read_text(), re.M)
if not printed or f"`{printed.group(1)}`" not in readme:
    sys.exit("README.md does not say what examples/counter prints (EXPECTED in "
             "examples/counter/check.py)")
print("README example matches examples/counter/main.cpp, and names what it prints")
