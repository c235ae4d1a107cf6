"""The one test command: scripts/test.sh runs the README's test commands in order and stops at the first
that fails; .ci/run is the set-up command and then that script."""

import shutil
import subprocess

from helpers import REPO

FOUR = [
    ".venv/bin/ruff check src tests bench",
    ".venv/bin/ruff format --check src tests bench",
    ".venv/bin/snakefmt --check Snakefile workflow",
    ".venv/bin/snakemake --lint",
    ".venv/bin/python -m pytest -q",
    ".venv/bin/python -m pytest -q -m browser",
    ".venv/bin/python -m pytest -q -m cluster",
]


def commands(path):
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def test_the_script_the_readme_and_ci_name_the_same_commands():
    assert commands(REPO / "scripts/test.sh")[:2] == ["set -euo pipefail", 'cd "$(dirname "$0")/.."']
    assert commands(REPO / "scripts/test.sh")[2:] == FOUR
    assert commands(REPO / ".ci/run")[2:] == ["bash scripts/setup.sh", "bash scripts/test.sh"]
    readme = (REPO / "README.md").read_text()
    start = readme.index("## Set up, run, test")
    section = readme[start : readme.index("\n## ", start + 1)]
    # The one test command, and each command the script runs named in the order it runs them.
    assert len([x for x in section.splitlines() if x.startswith("bash scripts/test.sh")]) == 1
    said = [section.index(f"`{name}`") for name in ("pytest -q", "pytest -q -m browser", "pytest -q -m cluster")]
    said = [section.index(name) for name in ("ruff", "snakefmt", "snakemake --lint")] + said
    assert said == sorted(said)


def test_the_script_runs_them_in_order_and_stops_at_the_first_failure(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts/test.sh", tmp_path / "scripts/test.sh")
    bin_ = tmp_path / ".venv/bin"
    bin_.mkdir(parents=True)
    calls = tmp_path / "calls"
    for tool in ("ruff", "snakefmt", "snakemake", "python"):  # fakes: note the call, fail where the FAIL file names it
        (bin_ / tool).write_text(
            f'#!/usr/bin/env bash\necho "{tool} $*" >> {calls}\n'
            f'[ "$(cat {tmp_path}/FAIL 2>/dev/null)" != "{tool} $*" ]\n'
        )
        (bin_ / tool).chmod(0o755)
    run = subprocess.run(["bash", str(tmp_path / "scripts/test.sh")], capture_output=True, text=True)
    assert run.returncode == 0 and calls.read_text().splitlines() == [c.replace(".venv/bin/", "") for c in FOUR]
    calls.unlink()
    (tmp_path / "FAIL").write_text("ruff format --check src tests bench")
    run = subprocess.run(["bash", str(tmp_path / "scripts/test.sh")], capture_output=True, text=True)
    assert run.returncode != 0 and calls.read_text().splitlines() == [
        "ruff check src tests bench",
        "ruff format --check src tests bench",
    ]
