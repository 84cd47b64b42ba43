"""The width hints of a Python node's methods, under the path earlier
releases gave them (`from launchpad_client import hints`, then
`hints.float32`): the same objects as `launchpad_client.float32` and the
others, which docs/python_nodes.md lists with the C++ type each stands for.
"""

from ._wire.hints import (Json, Tensor, float32, float64, int8, int16, int32, int64, uint8, uint16,
                          uint32, uint64)

__all__ = ["Json", "Tensor", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float32", "float64"]
