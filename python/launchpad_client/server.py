"""A Python object served as a node, under the path earlier releases gave it
(`from launchpad_client.server import NodeServer`): the same objects as
`launchpad_client.NodeServer` and `launchpad_client.caller_deadline`."""

from ._node.server import NodeServer, caller_deadline

__all__ = ["NodeServer", "caller_deadline"]
