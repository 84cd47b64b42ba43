#!/usr/bin/env python3
"""Writes the Kubernetes manifests of every example with --lp_dry_run and
checks them offline: each object against the Kubernetes API's schema
(tools/kube-validate, kubernetes-models), and one example's directory with
`kubectl kustomize`, as `kubectl apply -k` reads it. Checks too that the
validator refuses tests/kube/broken.yaml, so that a validator that checks
nothing cannot pass.

    validate_examples.py TOOLS_KUBE_VALIDATE_DIR EXAMPLE_BINARY...

Exits 77 (skipped) without node or tools/kube-validate's packages (npm ci
there), unless LP_REQUIRE_KUBE_VALIDATE is set: then a missing tool fails.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
IMAGE = "registry.invalid/x:1"


def missing(what: str) -> int:
    if os.environ.get("LP_REQUIRE_KUBE_VALIDATE"):
        print(f"FAIL: {what} (LP_REQUIRE_KUBE_VALIDATE is set)")
        return 1
    print(f"SKIP: {what}")
    return 77


def validate(validator: Path, files: list[Path]) -> subprocess.CompletedProcess:
    return subprocess.run(["node", str(validator / "validate.mjs"), *map(str, files)],
                          capture_output=True, text=True, timeout=120)


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    validator = Path(sys.argv[1])
    binaries = [Path(p) for p in sys.argv[2:]]
    if not shutil.which("node"):
        return missing("no node on PATH; install nodejs and npm, then run npm ci in " +
                       str(validator))
    for package in ("kubernetes-models", "yaml"):
        if not (validator / "node_modules" / package / "package.json").exists():
            return missing(f"{package} is not installed in {validator}; run npm ci there")

    problems = []
    with tempfile.TemporaryDirectory(prefix="lp-kube-test-") as scratch:
        launch_dirs = []
        for binary in binaries:
            out = Path(scratch) / binary.name
            command = [str(binary), "--lp_launch=kubernetes", f"--lp_kube_image={IMAGE}",
                       "--lp_dry_run", f"--lp_kube_dir={out}"]
            run = subprocess.run(command, capture_output=True, text=True, timeout=60)
            written = sorted(out.glob("lp-*")) if out.is_dir() else []
            if run.returncode != 0 or len(written) != 1:
                problems.append(f"{' '.join(command)} exited {run.returncode} and wrote "
                                f"{len(written)} launch directories:\n{run.stdout}{run.stderr}")
                continue
            launch = written[0]
            for name, mode in (("", 0o700), ("launch.yaml", 0o600),
                               ("kustomization.yaml", 0o600)):
                path = launch / name if name else launch
                found = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
                if found != mode:
                    problems.append(f"{path}: mode {found and oct(found)}, not {oct(mode)}")
            if f"kubectl apply -k {launch}" not in run.stdout:
                problems.append(f"{binary.name}: the dry run does not say `kubectl apply -k "
                                f"{launch}`:\n{run.stdout}")
            launch_dirs.append(launch)

        if launch_dirs:
            checked = validate(validator, [d / "launch.yaml" for d in launch_dirs])
            print(checked.stdout.strip())
            if checked.returncode != 0:
                problems.append("the examples' manifests are not valid:\n" + checked.stderr)

        refused = validate(validator, [HERE / "broken.yaml"])
        if refused.returncode != 1 or "completions" not in refused.stderr:
            problems.append("the validator did not refuse tests/kube/broken.yaml for its "
                            f"string completions (exit {refused.returncode}):\n"
                            f"{refused.stdout}{refused.stderr}")

        if not launch_dirs:
            pass
        elif not shutil.which("kubectl"):
            status = missing("no kubectl on PATH (Debian: kubernetes-client); "
                             "kubectl kustomize not checked")
            if status != 77:
                problems.append("kubectl is missing")
        else:
            built = subprocess.run(["kubectl", "kustomize", str(launch_dirs[0])],
                                   capture_output=True, text=True, timeout=120)
            if built.returncode != 0 or "kind: Job" not in built.stdout:
                problems.append(f"kubectl kustomize {launch_dirs[0]} failed (exit "
                                f"{built.returncode}):\n{built.stderr}")
            else:
                print(f"kubectl kustomize {launch_dirs[0].name}: "
                      f"{built.stdout.count('kind: ')} objects")

    for problem in problems:
        print("FAIL:", problem)
    print(f"kube manifests: {len(binaries)} examples, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
