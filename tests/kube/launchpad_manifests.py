#!/usr/bin/env python3
"""The Kubernetes manifests of a Launchpad program (python/launchpad/,
docs/coming_from_launchpad.md): Launchpad's consumer/producers
(tests/launchpad/programs.py) launched with launch_type='kubernetes' and
--lp_dry_run, as its user runs it, then checked offline as kube_manifests
checks the examples' (tools/kube-validate, kubectl kustomize).

    launchpad_manifests.py TOOLS_KUBE_VALIDATE_DIR LP_LAUNCHPAD PROGRAMS_PY

Asserts that:
- the script exits 0 and writes one launch directory (0700, its files 0600)
  whose objects the Kubernetes API's schemas accept;
- the Secret carries the program's description under `data` (base64): the
  CBOR that lp.launch wrote, with the program's name and its four nodes
  (three producers, the consumer), each definition pickled;
- every container runs the image's lp-launchpad with no file of the
  workstation (no description's path, no --lp_python of this interpreter):
  the pods read the description from the Secret's mount;
- the Jobs are those of the program's groups (coordinator, producer with 3
  indexes, consumer);
- nothing is left: the description's directory is gone from TMPDIR;
- tests/launchpad/groups.py's group settings reach their Job: restarts as
  backoffLimitPerIndex, resources as the container's, its environment;
- a launch without --lp_kube_image fails naming the flag, and one whose
  description is too large for a Secret fails saying so, each leaving no
  launch directory.

Exits 77 (skipped) without node, tools/kube-validate's packages, PyYAML or
cloudpickle, unless LP_REQUIRE_KUBE_VALIDATE (the tools) or
LP_REQUIRE_CLOUDPICKLE (cloudpickle) is set: then it fails.
"""

from __future__ import annotations

import base64
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import cbor2

ROOT = Path(__file__).resolve().parent.parent.parent
IMAGE = "registry.invalid/launchpad-program:1"

# A program whose one node holds 2 MB: its description cannot go in a Secret.
TOO_LARGE = """
import sys
import launchpad as lp

class Holder:
    def __init__(self, data):
        self._data = data

    def run(self):
        lp.stop()

program = lp.Program("too_large")
program.add_node(lp.CourierNode(Holder, bytes(2_000_000)), label="holder")
lp.launch(program, launch_type="kubernetes", lp_flags=tuple(sys.argv[1:])).wait()
"""


def missing(what: str, variable: str) -> int:
    if os.environ.get(variable):
        print(f"FAIL: {what} ({variable} is set)")
        return 1
    print(f"SKIP: {what}")
    return 77


def check_groups(work: Path, env: dict[str, str], script: list[str], flags: list[str],
                 validator: Path, check: Any) -> None:
    """tests/launchpad/groups.py's groups reach their Jobs: flaky's
    restart_on_failure(2) as backoffLimitPerIndex 2, its resources
    (1 CPU, 256 MB) and its environment (program.group(...).env and
    local_resources'); plain's Job has none of them."""
    import yaml
    out = work / "groups"
    run = subprocess.run([*script, "kubernetes", str(work / "unused"), "2", "0",
                          *flags[:2], f"--lp_kube_dir={out}"],
                         capture_output=True, text=True, timeout=120, env=env)
    written = sorted(out.glob("lp-*")) if out.is_dir() else []
    check(run.returncode == 0 and len(written) == 1,
          f"groups.py's manifests are written ({run.returncode}):\n{run.stdout}{run.stderr}")
    if len(written) != 1:
        return
    checked = subprocess.run(["node", str(validator / "validate.mjs"),
                              str(written[0] / "launch.yaml")],
                             capture_output=True, text=True, timeout=120)
    check(checked.returncode == 0,
          f"the schemas accept groups.py's objects:\n{checked.stdout}{checked.stderr}")
    objects = [o for o in yaml.safe_load_all((written[0] / "launch.yaml").read_text()) if o]
    jobs = {o["metadata"]["name"].rsplit("-", 1)[-1]: o for o in objects if o["kind"] == "Job"}
    flaky, plain = jobs.get("flaky"), jobs.get("plain")
    check(flaky is not None and plain is not None, f"a Job per group ({sorted(jobs)})")
    if flaky is None or plain is None:
        return

    def container(job: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = job["spec"]["template"]["spec"]["containers"][0]
        return found

    check(flaky["spec"]["backoffLimitPerIndex"] == 2 and plain["spec"]["backoffLimitPerIndex"]
          == 0, "restart_on_failure(2) is flaky's backoffLimitPerIndex 2; plain's is 0 "
          f"({flaky['spec']['backoffLimitPerIndex']}, {plain['spec']['backoffLimitPerIndex']})")
    asked = {"cpu": "1", "memory": "256Mi"}
    check(container(flaky)["resources"] == {"requests": asked, "limits": asked},
          f"flaky's pods ask lp.Resources(cpus=1, memory_mb=256) "
          f"({container(flaky)['resources']})")
    check(container(plain)["resources"]["requests"].get("memory") is None,
          f"plain's ask no memory ({container(plain)['resources']})")
    own = [{"name": "GROUPS_TEST_COLOR", "value": "blue"},
           {"name": "GROUPS_TEST_SHADE", "value": "dark"}]
    check(all(e in container(flaky)["env"] for e in own)
          and not any(e["name"].startswith("GROUPS_TEST") for e in container(plain)["env"]),
          "flaky's pods have its environment (group env and local_resources'), plain's not")


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    validator, launcher, programs = (Path(p) for p in sys.argv[1:])
    groups = programs.parent / "groups.py"
    if not shutil.which("node"):
        return missing(f"no node on PATH; install nodejs and npm, then run npm ci in {validator}",
                       "LP_REQUIRE_KUBE_VALIDATE")
    for package in ("kubernetes-models", "yaml"):
        if not (validator / "node_modules" / package / "package.json").exists():
            return missing(f"{package} is not installed in {validator}; run npm ci there",
                           "LP_REQUIRE_KUBE_VALIDATE")
    try:
        import yaml
    except ImportError:
        return missing("no PyYAML (apt-get install python3-yaml)", "LP_REQUIRE_KUBE_VALIDATE")
    try:
        import cloudpickle  # noqa: F401
    except ImportError:
        return missing(f"{sys.executable} has no cloudpickle (apt-get install "
                       "python3-cloudpickle)", "LP_REQUIRE_CLOUDPICKLE")

    problems: list[str] = []

    def check(condition: bool, what: str) -> None:
        print(("ok: " if condition else "FAIL: ") + what)
        if not condition:
            problems.append(what)

    with tempfile.TemporaryDirectory(prefix="lp-kube-launchpad-") as scratch:
        work = Path(scratch)
        tmp = work / "tmp"  # the script's TMPDIR: where the description goes
        tmp.mkdir()
        out = work / "manifests"
        env = dict(os.environ, TMPDIR=str(tmp), LP_LAUNCHPAD_LAUNCHER=str(launcher),
                   PYTHONPATH=str(ROOT / "python"), PYTHONDONTWRITEBYTECODE="1")
        flags = [f"--lp_kube_image={IMAGE}", "--lp_dry_run", f"--lp_kube_dir={out}"]
        run = subprocess.run([sys.executable, str(programs), "consumer_producers", "kubernetes",
                              str(work / "result.json"), *flags],
                             capture_output=True, text=True, timeout=120, env=env)
        written = sorted(out.glob("lp-*")) if out.is_dir() else []
        check(run.returncode == 0 and len(written) == 1,
              f"the script exits 0 ({run.returncode}) and writes one launch directory "
              f"({len(written)}):\n{run.stdout}{run.stderr}")
        if problems:
            return 1
        launch = written[0]
        check(f"kubectl apply -k {launch}" in run.stdout, "the dry run says how to apply it")
        for path, mode in ((launch, 0o700), (launch / "launch.yaml", 0o600),
                           (launch / "kustomization.yaml", 0o600)):
            found = stat.S_IMODE(path.stat().st_mode)
            check(found == mode, f"{path.name}: mode {oct(found)}, {oct(mode)} expected")

        checked = subprocess.run(["node", str(validator / "validate.mjs"),
                                  str(launch / "launch.yaml")],
                                 capture_output=True, text=True, timeout=120)
        print(checked.stdout.strip())
        check(checked.returncode == 0,
              f"the Kubernetes API's schemas accept every object:\n{checked.stderr}")

        objects = [o for o in yaml.safe_load_all((launch / "launch.yaml").read_text()) if o]
        secrets = [o for o in objects if o["kind"] == "Secret"]
        check(len(secrets) == 1, f"one Secret ({len(secrets)})")
        data = secrets[0].get("data") or {}
        check(list(data) == ["program.cbor"], f"the Secret's data holds the description "
                                              f"({list(data)})")
        description = cbor2.loads(base64.b64decode(data.get("program.cbor", ""), validate=True))
        nodes = description.get("nodes", [])
        check(description.get("name") == "consumer_producers"
              and [(n["group"], n["service"]) for n in nodes]
              == [("producer", "Producer")] * 3 + [("consumer", "Consumer")]
              and all(isinstance(n["definition"], bytes) and n["definition"] for n in nodes)
              and [n["edges"] for n in nodes][3] == ["producer/0", "producer/1", "producer/2"],
              "the description is the program's: its name, 3 producers and the consumer "
              "given their handles, each definition pickled")
        check({"secret", "tls.crt", "tls.key"} <= set(secrets[0].get("stringData", {})),
              "the Secret still holds the launch's secret and TLS credentials")

        jobs = {o["metadata"]["name"].rsplit("-", 1)[-1]: o for o in objects
                if o["kind"] == "Job"}
        check({k: j["spec"]["completions"] for k, j in jobs.items()}
              == {"coordinator": 1, "producer": 3, "consumer": 1},
              f"the Jobs: the coordinator's, producer with 3 indexes, consumer "
              f"({ {k: j['spec']['completions'] for k, j in jobs.items()} })")
        expected = ["/usr/local/bin/lp-launchpad", "--lp_launch=kubernetes",
                    f"--lp_kube_image={IMAGE}"]
        for name, job in jobs.items():
            container = job["spec"]["template"]["spec"]["containers"][0]
            check(container["command"] == expected and not container.get("args"),
                  f"{name}: the pod runs the image's lp-launchpad and names no file of the "
                  f"workstation ({container['command']})")
            mounts = container.get("volumeMounts", [])
            check(any(m["mountPath"] == "/var/run/launchpad" for m in mounts)
                  and {"name": "LP_RUN_DIR", "value": "/var/run/launchpad"} in container["env"],
                  f"{name}: the Secret is mounted where LP_RUN_DIR says")

        check(not any(tmp.iterdir()),
              f"nothing is left in TMPDIR ({sorted(p.name for p in tmp.iterdir())})")
        check_groups(work, env, [sys.executable, str(groups)], flags, validator, check)

        built = shutil.which("kubectl") and subprocess.run(
            ["kubectl", "kustomize", str(launch)], capture_output=True, text=True, timeout=120)
        if not built:
            status = missing("no kubectl on PATH (Debian: kubernetes-client); kubectl "
                             "kustomize not checked", "LP_REQUIRE_KUBE_VALIDATE")
            if status != 77:
                problems.append("kubectl is missing")
        else:
            check(built.returncode == 0 and "program.cbor" in built.stdout,
                  f"kubectl kustomize reads the directory (exit {built.returncode}):\n"
                  f"{built.stderr}")

        # Two launches that cannot be.
        refused = work / "refused"
        run = subprocess.run([sys.executable, str(programs), "consumer_producers", "kubernetes",
                              str(work / "result.json"), "--lp_dry_run",
                              f"--lp_kube_dir={refused}"],
                             capture_output=True, text=True, timeout=120, env=env)
        check(run.returncode != 0 and "--lp_kube_image=<image>" in run.stderr
              and not list(refused.glob("lp-*")),
              f"without --lp_kube_image: refused, naming the flag, nothing written "
              f"(exit {run.returncode}):\n{run.stderr}")
        (work / "too_large.py").write_text(TOO_LARGE)
        run = subprocess.run([sys.executable, str(work / "too_large.py"), *flags[:2],
                              f"--lp_kube_dir={refused}"],
                             capture_output=True, text=True, timeout=120, env=env)
        check(run.returncode != 0 and "more than the 1048576 Kubernetes takes" in run.stderr
              and not list(refused.glob("lp-*")),
              f"a description too large for a Secret: refused, saying so, nothing written "
              f"(exit {run.returncode}):\n{run.stderr[-2000:]}")
        check(not any(tmp.iterdir()),
              f"nothing is left in TMPDIR after them ({sorted(p.name for p in tmp.iterdir())})")

    print(f"kube launchpad manifests: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
