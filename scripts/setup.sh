#!/usr/bin/env bash
# One-command set-up: system packages (Leela Zero as the reference engine, OpenCL on the CPU for
# KataGo), then a virtual environment in .venv with moveorder and its pinned dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
APT_PACKAGES="leela-zero ocl-icd-libopencl1 pocl-opencl-icd"
missing=""
for p in $APT_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "setup: installing Debian packages:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[test]"
echo "setup: done. Activate with: source .venv/bin/activate"
