#!/usr/bin/env python3
"""Simulated pods: runs a Kubernetes launch's manifests (what
--lp_launch=kubernetes --lp_dry_run writes) on this machine, one network
namespace per pod, as far as the launch's binary can tell (docs/kubernetes.md,
"How it was tested").

What it stands in for, and how:
- the kubelet: each pod is a test host of tools/test-hosts.sh (a network
  namespace on a bridge, private addresses), entered in a mount and UTS
  namespace of its own, with the host name an Indexed Job's pod gets
  (`<job>-<index>`), the environment of its container (the manifest's env,
  and JOB_COMPLETION_INDEX, over the image's: --image-env), its working
  directory (the container's workingDir, else the image's: --workdir), and
  the Secret's keys as files (`data`'s decoded from base64, and
  `stringData`'s), and an emptyDir volume, fresh at each start, where the
  container mounts one and LP_KUBE_SOCKET_DIR names its mount path (the
  node's sockets/: a directory of the harness's instead, 0777 as an
  emptyDir's);
- cluster DNS: every pod's /etc/hosts names every pod as
  `<job>-<index>.<service>`, the names that the headless Service gives;
- the Job controller: a pod that exits 0 completes its index; one that
  fails is started again while its index has failed no more than
  backoffLimitPerIndex times (after 1 s, not the controller's 10 s and up),
  else its index fails, as it does at once for an exit status that a
  podFailurePolicy rule FailIndex names (onExitCodes, operator In); the
  coordinator's Job has one index and no retries;
- `kubectl delete`: once the coordinator has ended, no index starts again;
  the pods still running after their terminationGracePeriodSeconds and 40 s
  more (a node pod ends by itself 30 s after it last heard from the
  coordinator) get SIGTERM, and SIGKILL after as long again.
What it does not stand in for: the API server, scheduling, images
(the pod runs this machine's build of the binary, named by --binary, on
this machine's file system; of an image's configuration it has only
--image-env and --workdir), resources and limits, probes, and the Secret's
mount path (the pod's LP_RUN_DIR names a private directory of the
harness's instead).

    pods.py MANIFEST_DIR --binary PATH [--kill GROUP:INDEX] [--stop-when GROUP:INDEX]
            [--start-late GROUP:INDEX] [--timeout S] [--image-env NAME=VALUE]...
            [--workdir DIR]

GROUP is a process group's name in the program (empty for the nodes
outside any group); `--kill coordinator` kills the coordinator's once every
node pod serves. --kill sends SIGKILL to that pod's process once it
serves (its log says "serving at"); --stop-when sends SIGTERM to the
coordinator's once that pod serves (after the kill, if both are given), as
`lp-kube stop` does, and first asks for the status table in the
coordinator's pod, in its container's environment, as `lp-kube status`
does through `kubectl exec`. --start-late starts that pod
only once the coordinator's log says the program stops and every other
node pod has ended (the Job controller starts pods in no order: a short
program may end before a pod of it runs).
--image-env and --workdir are
what an image's ENV and WORKDIR would give every container (PATH, unless
given, is /usr/sbin:/usr/bin:/sbin:/bin; the working directory, unless
given, is /, as in an image without WORKDIR): e.g. PYTHONPATH for a
program's Python nodes, and the directory of their modules.

prints one JSON object: how each pod and index ended, and where the logs are.
Run as root; the test hosts must be down before, and are down after.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
TEST_HOSTS = ROOT / "tools" / "test-hosts.sh"
# A node pod stops by itself when the coordinator has not answered this
# long (kube::coordinator_patience), and some more.
NODE_PATIENCE = 40


class Pod:
    def __init__(self, job: dict, index: int, host: int):
        self.job = job
        self.index = index
        self.host = host  # the test host it runs on: lp-h<host>
        self.name = f"{job['metadata']['name']}-{index}"
        self.process: subprocess.Popen | None = None
        self.starts = 0
        self.failures = 0
        self.exits: list[int] = []
        self.outcome = ""  # "succeeded" or "failed" once its index is done
        self.restart_at = 0.0
        self.log_path = ""
        self.sockets_dir = ""  # its emptyDir of sockets, at its last start


def load(manifest_dir: Path) -> tuple[list[dict], dict]:
    objects = []
    for path in sorted(manifest_dir.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        objects += [o for o in yaml.safe_load_all(path.read_text()) if o]
    jobs = [o for o in objects if o["kind"] == "Job"]
    secrets = [o for o in objects if o["kind"] == "Secret"]
    if not jobs or len(secrets) != 1:
        sys.exit(f"pods.py: {manifest_dir} holds {len(jobs)} Jobs and {len(secrets)} Secrets")
    return jobs, secrets[0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("manifests", type=Path)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--kill", default="",
                        help="GROUP:INDEX or coordinator: SIGKILL that pod once it serves")
    parser.add_argument("--stop-when", default="",
                        help="GROUP:INDEX: SIGTERM the coordinator once that pod serves")
    parser.add_argument("--start-late", default="",
                        help="GROUP:INDEX: start that pod once the program stops "
                             "and the other node pods have ended")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--image-env", action="append", default=[], metavar="NAME=VALUE",
                        help="a variable of the image's environment (ENV), under the container's")
    parser.add_argument("--workdir", default="/",
                        help="the image's working directory (WORKDIR); default /")
    args = parser.parse_args()
    for variable in args.image_env:
        if "=" not in variable or variable.startswith("="):
            parser.error(f"--image-env {variable!r}: give NAME=VALUE")

    jobs, secret = load(args.manifests)
    work = args.work or Path(tempfile.mkdtemp(prefix="lp-pods-"))
    work.mkdir(parents=True, exist_ok=True)
    # The coordinator first: its pod gets test host 1.
    jobs.sort(key=lambda j: j["metadata"]["labels"].get("launchpad.dev/role") != "coordinator")
    pods = []
    for job in jobs:
        for index in range(job["spec"]["completions"]):
            pods.append(Pod(job, index, len(pods) + 1))

    subprocess.run([TEST_HOSTS, "up", str(len(pods))], check=True, stdout=subprocess.DEVNULL)
    try:
        return run(args, pods, secret, work)
    finally:
        for pod in pods:
            if pod.process and pod.process.poll() is None:
                pod.process.kill()
                pod.process.wait()
        subprocess.run([TEST_HOSTS, "down"], check=False, stdout=subprocess.DEVNULL)


def run(args, pods: list[Pod], secret: dict, work: Path) -> int:
    # The Secret's keys as files, readable by their owner only (defaultMode):
    # `data`'s base64 decoded, then `stringData`'s, which the API server
    # merges over them.
    secret_dir = work / "secret"
    secret_dir.mkdir(mode=0o700, exist_ok=True)
    files = {key: base64.b64decode(value, validate=True)
             for key, value in (secret.get("data") or {}).items()}
    files.update((key, value.encode()) for key, value in secret.get("stringData", {}).items())
    for key, value in files.items():
        path = secret_dir / key
        path.write_bytes(value)
        path.chmod(0o400)
    # Cluster DNS: each pod's name under its Job's subdomain.
    hosts = work / "hosts"
    lines = ["127.0.0.1 localhost"]
    for pod in pods:
        subdomain = pod.job["spec"]["template"]["spec"]["subdomain"]
        lines.append(f"10.231.0.{pod.host} {pod.name}.{subdomain} {pod.name}")
    hosts.write_text("\n".join(lines) + "\n")

    def pod_named(what: str) -> Pod | None:
        if not what:
            return None
        if what == "coordinator":
            return pods[0]
        group, index = what.rsplit(":", 1)
        for pod in pods:
            env = pod.job["spec"]["template"]["spec"]["containers"][0].get("env", [])
            if {"name": "LP_KUBE_GROUP", "value": group} in env and pod.index == int(index):
                return pod
        sys.exit(f"pods.py: no pod {what}")

    image = Image(dict(v.split("=", 1) for v in args.image_env), args.workdir)
    to_kill, stop_when = pod_named(args.kill), pod_named(args.stop_when)
    late = pod_named(args.start_late)
    killed = stopped = False
    status_table = ""

    started = time.monotonic()
    for pod in pods:
        if pod is not late:
            start(pod, args.binary, secret_dir, hosts, work, image)
    coordinator = pods[0]
    deleted_at = None
    while True:
        now = time.monotonic()
        if now - started > args.timeout:
            print(f"pods.py: the launch ran past {args.timeout} s", file=sys.stderr)
            break
        # The coordinator is killed once every node serves.
        ready = (all(serving(p) for p in pods[1:]) if to_kill is coordinator
                 else to_kill and serving(to_kill))
        if to_kill and not killed and ready:
            to_kill.process.send_signal(signal.SIGKILL)
            to_kill.process.wait()  # so that it no longer counts as serving
            killed = True
        if (stop_when and not stopped and (killed or not to_kill) and serving(stop_when)
                and coordinator.process):
            status_table = ask_status(coordinator, args.binary, secret_dir, image)
            coordinator.process.send_signal(signal.SIGTERM)
            stopped = True
        if (late and late.starts == 0
                and all(p.process and p.process.poll() is not None
                        for p in pods[1:] if p is not late)
                and "[lp] stopping:" in Path(coordinator.log_path).read_text(errors="replace")):
            start(late, args.binary, secret_dir, hosts, work, image)
        for pod in pods:
            settle(pod, now, args.binary, secret_dir, hosts, work, image, deleted_at is None)
        # The launch is over when the coordinator's Job is. The other pods
        # get their grace period to end by themselves; then whatever still
        # runs is deleted, as `kubectl delete` would.
        if coordinator.outcome and deleted_at is None:
            deleted_at = now
        if deleted_at is not None:
            running = [p for p in pods if p.process and p.process.poll() is None]
            if not running:
                break
            if now - deleted_at > max(grace_of(p) for p in pods) + NODE_PATIENCE:
                for pod in running:
                    delete(pod)
                break
        time.sleep(0.1)

    report = {
        "coordinator": coordinator.exits[-1] if coordinator.exits else None,
        "killed": killed,
        "stopped": stopped,
        "status": status_table,
        "seconds": round(time.monotonic() - started, 1),
        "pods": [
            {"pod": p.name, "job": p.job["metadata"]["name"], "index": p.index,
             "starts": p.starts, "exits": p.exits, "outcome": p.outcome or "running",
             "log": p.log_path, "sockets": p.sockets_dir}
            for p in pods
        ],
    }
    print(json.dumps(report, indent=1))
    return 0


def ask_status(coordinator: Pod, binary: str, secret_dir: Path, image: Image) -> str:
    """What `lp-kube status` shows: --lp_status, run in the coordinator's
    pod in its container's environment, as `kubectl exec` runs it."""
    container = coordinator.job["spec"]["template"]["spec"]["containers"][0]
    service = coordinator.job["spec"]["template"]["spec"]["subdomain"]
    env = container_env(coordinator, secret_dir, image)
    argv = ["nsenter", f"--net=/run/netns/lp-h{coordinator.host}", "env", "-i"]
    argv += [f"{k}={v}" for k, v in env.items()] + [binary]
    argv += list(container["command"][1:]) + list(container.get("args", []))
    argv.append(f"--lp_status=/tmp/lp-kube-{service}")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return done.stdout + done.stderr


def serving(pod: Pod) -> bool:
    """Whether the pod's current process serves."""
    if not pod.process or pod.process.poll() is not None:
        return False
    log = Path(pod.log_path).read_text(errors="replace")
    return "serving at" in log[log.rfind("== start"):]


def grace_of(pod: Pod) -> int:
    return pod.job["spec"]["template"]["spec"].get("terminationGracePeriodSeconds", 30)


class Image:
    """What the image's configuration gives every container: its
    environment (ENV) and working directory (WORKDIR)."""

    def __init__(self, env: dict, workdir: str):
        self.env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **env}
        self.workdir = workdir


def empty_dir_mounted_at(pod: Pod, path: str) -> bool:
    """Whether the pod's container mounts an emptyDir volume at path."""
    spec = pod.job["spec"]["template"]["spec"]
    empty = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
    return any(m["mountPath"] == path and m["name"] in empty
               for m in spec["containers"][0].get("volumeMounts", []))


def container_env(pod: Pod, secret_dir: Path, image: Image) -> dict:
    """The environment of the pod's container: its env over the image's,
    as the kubelet merges them."""
    container = pod.job["spec"]["template"]["spec"]["containers"][0]
    env = dict(image.env)
    env.update({"HOSTNAME": pod.name, "JOB_COMPLETION_INDEX": str(pod.index)})
    for variable in container.get("env", []):
        env[variable["name"]] = variable["value"]
    env["LP_RUN_DIR"] = str(secret_dir)  # the harness's, not the mount path
    if "LP_KUBE_SOCKET_DIR" in env:
        if not empty_dir_mounted_at(pod, env["LP_KUBE_SOCKET_DIR"]):
            sys.exit(f"pods.py: {pod.name}'s LP_KUBE_SOCKET_DIR={env['LP_KUBE_SOCKET_DIR']} "
                     "is no emptyDir's mount path")
        env["LP_KUBE_SOCKET_DIR"] = pod.sockets_dir  # the harness's, as for the Secret
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def start(pod: Pod, binary: str, secret_dir: Path, hosts: Path, work: Path,
          image: Image) -> None:
    spec = pod.job["spec"]["template"]["spec"]
    container = spec["containers"][0]
    command = [binary] + list(container.get("args", []))
    if container.get("command"):
        command = [binary] + list(container["command"][1:]) + list(container.get("args", []))
    pod.starts += 1
    # A pod that starts again is a new pod of its Job, with a new emptyDir.
    sockets = work / f"{pod.name}.{pod.starts}.sockets"
    sockets.mkdir()
    sockets.chmod(0o777)
    pod.sockets_dir = str(sockets)
    env = container_env(pod, secret_dir, image)
    pod.log_path = str(work / f"{pod.name}.log")
    log = open(pod.log_path, "a")
    log.write(f"== start {pod.starts}\n")
    log.flush()
    # As tools/test-hosts.sh run does, with the pod's own name and hosts.
    shell = ('mount --bind "$0" /etc/hosts && hostname "$1" && shift && '
             'exec env -i "$@"')
    argv = ["nsenter", f"--net=/run/netns/lp-h{pod.host}", "unshare", "--mount", "--uts",
            "sh", "-c", shell, str(hosts), pod.name]
    argv += [f"{k}={v}" for k, v in env.items()] + command
    pod.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL,
                                   cwd=container.get("workingDir") or image.workdir)
    log.close()


def delete(pod: Pod) -> None:
    pod.process.send_signal(signal.SIGTERM)
    try:
        pod.process.wait(timeout=grace_of(pod))
    except subprocess.TimeoutExpired:
        pod.process.kill()
        pod.process.wait()
    pod.exits.append(pod.process.returncode)
    pod.outcome = "deleted"


def settle(pod: Pod, now: float, binary, secret_dir, hosts, work, image: Image,
           restarts: bool) -> None:
    """The Job controller's part: a pod that ended completes, fails or
    restarts its index (not once the launch is being deleted)."""
    if pod.outcome:
        return
    if pod.restart_at and not restarts:
        pod.outcome = "failed"
        return
    if pod.restart_at and now >= pod.restart_at:
        pod.restart_at = 0.0
        start(pod, binary, secret_dir, hosts, work, image)
        return
    if pod.process is None or pod.restart_at or pod.process.poll() is None:
        return
    status = pod.process.returncode
    pod.exits.append(status)
    if status == 0:
        pod.outcome = "succeeded"
        return
    pod.failures += 1
    spec = pod.job["spec"]
    limit = spec.get("backoffLimitPerIndex", spec.get("backoffLimit", 6))
    if pod.failures > limit or fails_index(spec, status):
        pod.outcome = "failed"
    else:
        pod.restart_at = now + 1.0


def fails_index(spec: dict, status: int) -> bool:
    """A podFailurePolicy rule FailIndex whose onExitCodes (operator In, for
    the container "node") hold the exit status: the index fails at once."""
    for rule in (spec.get("podFailurePolicy") or {}).get("rules", []):
        codes = rule.get("onExitCodes")
        if rule.get("action") == "FailIndex" and codes and codes.get("operator") == "In" \
                and codes.get("containerName", "node") == "node" and status in codes["values"]:
            return True
    return False


if __name__ == "__main__":
    sys.exit(main())
