"""A Python object served as a node of a program: its process (main), the
spec its host writes (spec), the control socket to its host (host), its
server (server, with methods and figures), its handles of other nodes
(peers), its checkpoints (checkpoint), run()'s signs of progress
(progress) and glibc's malloc tuned as a C++ node's process tunes it
(malloc_tuning)."""
