"""Calling the nodes of a running program: a keep-alive connection with
deadlines (connection), a pool of them per node (transport), a node's proxy
and its methods (node), a launch's nodes from its run directory (program)."""
