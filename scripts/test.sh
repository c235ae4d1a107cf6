#!/usr/bin/env bash
# One test command: the README's test commands, in order; the first that fails stops the rest.
# (.ci/run runs scripts/setup.sh, then this.)
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/snakefmt --check Snakefile workflow
.venv/bin/snakemake --lint
.venv/bin/python -m pytest -q
.venv/bin/python -m pytest -q -m browser
.venv/bin/python -m pytest -q -m cluster
