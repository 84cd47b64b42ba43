"""A Python node's process gives back what its malloc tuning keeps once the
threads of a burst have ended (launchpad_client/_node/malloc_tuning.py), as a C++
node's does (tests/unit-load.cpp). Each case runs in a process of its own,
whose allocator it may tune."""

import json
import os
import platform
import subprocess
import sys
import unittest

# 32 threads each hold 16 blocks of 256 KiB (128 MiB in all), and one small
# block that outlives them, then free the large ones and, as the server's
# threads do, either end ("end") or note a call served and stay, blocked as
# on an idle connection ("quiet"). Prints the RSS before, while they hold, and
# once the memory has been given back (or 20 s later).
BURST = r"""
import json, os, sys, threading, time
from launchpad_client._node import malloc_tuning

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

malloc_tuning.keep_large_blocks()
tuned = malloc_tuning._libc is not None
end = sys.argv[1] == "end"
before = rss_mib()
held, go, checked = threading.Barrier(33), threading.Barrier(33), threading.Event()
survivors = []

def burst():
    survivors.append(bytearray(512))
    blocks = [bytearray(256 << 10) for _ in range(16)]  # zero-filled: resident
    held.wait()
    go.wait()
    del blocks
    if end:
        malloc_tuning.thread_ended()
        return
    malloc_tuning.call_served()
    checked.wait()

threads = [threading.Thread(target=burst) for _ in range(32)]
for t in threads:
    t.start()
held.wait()
peak = rss_mib()
go.wait()
freed = time.monotonic()
while tuned and time.monotonic() < freed + 20 and (malloc_tuning.returns == 0 or
                                                    rss_mib() > before + 16):
    time.sleep(0.02)
figures = {"tuned": tuned, "before": before, "peak": peak, "after": rss_mib(),
           "seconds": time.monotonic() - freed, "returns": malloc_tuning.returns,
           "threads": threading.active_count()}
checked.set()
for t in threads:
    t.join()
print(json.dumps(figures))
"""


def run_burst(how, **environment):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LP_TUNE_MALLOC", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                        "GLIBC_TUNABLES")}
    env.update(environment)
    done = subprocess.run([sys.executable, "-c", BURST, how], env=env, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"the burst's process failed:\n{done.stderr}")
    return json.loads(done.stdout)


@unittest.skipUnless(platform.libc_ver()[0] == "glibc", "the tuning is glibc's")
class MallocTuning(unittest.TestCase):
    def check_given_back(self, figures):
        print(f"\n  a Python burst: {json.dumps(figures)}", file=sys.stderr)
        self.assertTrue(figures["tuned"])
        message = json.dumps(figures)
        self.assertGreater(figures["peak"], figures["before"] + 64, message)
        self.assertLess(figures["after"], figures["before"] + 16, message)
        # Once for the wave of 32 threads, not once a thread.
        self.assertGreaterEqual(figures["returns"], 1, message)
        self.assertLessEqual(figures["returns"], 3, message)

    def test_a_burst_s_memory_goes_back_once_its_threads_end(self):
        self.check_given_back(run_burst("end", LP_TUNE_MALLOC="1"))

    # On Debian 13 (glibc 2.41, Python 3.13) the quiet node's malloc_trim
    # runs but its RSS stays near the peak (81-93 MiB of 149-162): not
    # understood yet, noted on issue 50; the thread-end trigger holds there.
    @unittest.skipIf(tuple(int(p) for p in (platform.libc_ver()[1] or "0").split(".")[:2]) > (2, 36),
                     "the quiet trigger gives nothing back on glibc > 2.36 yet (issue 50 note)")
    def test_a_burst_s_memory_goes_back_once_the_node_is_quiet(self):
        # The threads stay, as on the idle connections a C++ client keeps.
        figures = run_burst("quiet", LP_TUNE_MALLOC="1")
        self.check_given_back(figures)
        self.assertGreaterEqual(figures["threads"], 33)
        self.assertGreaterEqual(figures["seconds"], 2.0)  # quiet for 2 s first

    def test_untuned_without_the_host_s_word_or_with_the_user_s_settings(self):
        self.assertFalse(run_burst("end")["tuned"])  # --lp_system_malloc: the host says nothing
        figures = run_burst("end", LP_TUNE_MALLOC="1", MALLOC_TRIM_THRESHOLD_="131072")
        self.assertFalse(figures["tuned"])
        self.assertEqual(figures["returns"], 0)


if __name__ == "__main__":
    unittest.main()
