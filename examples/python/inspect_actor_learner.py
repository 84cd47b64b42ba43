"""Look inside a running actor_learner from Python, as a notebook would.

Start the example; attach() finds every node's address in its run
directory (the file `nodes`):

    build/examples/actor_learner --lp_launch=local_mp &
    # [lp] the launch's secret is in /tmp/lp-actor_learner-AbC123/secret
    PYTHONPATH=python python3 examples/python/inspect_actor_learner.py /tmp/lp-actor_learner-AbC123

Without an argument it takes the newest /tmp/lp-actor_learner-* run directory.
The cells (# %%) run one by one in Jupyter or VS Code too.
"""

# %% Attach to the program: the secret and the nodes' addresses come from its run directory.
import glob
import os
import sys
import time

import launchpad_client as lp

if len(sys.argv) > 1:
    run_dir = sys.argv[1]
else:
    runs = sorted(glob.glob("/tmp/lp-actor_learner-*"), key=os.path.getmtime)
    if not runs:
        sys.exit("no /tmp/lp-actor_learner-* run directory: start the example first (see above)")
    run_dir = runs[-1]
prog = lp.attach(run_dir, wait_for=["replay", "learner"])
print(prog)
print(prog["learner"].get_parameters.__doc__.splitlines()[0])

# %% Watch the replay buffer fill and fetch the latest parameters while the learner learns.
replay, learner = prog["replay"], prog["learner"]
q = None
try:
    for _ in range(200):
        size, q, done = replay.info()[0]["size"], learner.get_parameters(), learner.done()
        print(f"replay size {size:5d}, learner done: {done}")
        if done:
            break
        time.sleep(0.1)
except (lp.TransportError, lp.RemoteError) as e:
    # Once the learner is done the actors return and the program stops: its
    # nodes refuse calls while they drain (503 stopping), then are gone.
    print(f"the program has stopped ({e.message if isinstance(e, lp.RemoteError) else e.reason})")
if q is None:
    sys.exit("no parameters were read")

# %% The latest policy read: the best action in each state of the 5x5 grid world.
if lp.have_numpy():
    print(f"Q-table: {q.shape} {q.dtype}, values from {q.min():.2f} to {q.max():.2f}")
    best = q.argmax(axis=1).tolist()
else:  # without numpy a tensor is a dict of shape and values
    rows = [q["data"][i:i + 4] for i in range(0, len(q["data"]), 4)]
    best = [row.index(max(row)) for row in rows]
arrows = "^>v<"  # actions 0 up, 1 right, 2 down, 3 left
for row in range(5):
    print(" ".join("G" if (row, col) == (4, 4) else "X" if (row, col) in ((1, 3), (3, 1))
                   else arrows[best[row * 5 + col]] for col in range(5)))
prog.close()
