#!/usr/bin/env python3
"""Fails unless the README's first C++ block is examples/counter/main.cpp."""
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
print("README example matches examples/counter/main.cpp")
