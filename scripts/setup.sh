#!/usr/bin/env bash
# One-command set-up: system packages (Leela Zero as the reference engine, OpenCL on the CPU for
# KataGo, chromium for the page's tests), then a virtual environment in .venv with moveorder, its
# pipeline and test extras, at the versions of requirements.lock.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# slurm-wlm and munge: a one-node SLURM cluster for the tests of the SLURM profile; chromium and
# chromium-driver: the browser the page's tests drive (tests/test_page.py).
APT_PACKAGES="leela-zero ocl-icd-libopencl1 pocl-opencl-icd slurm-wlm munge chromium chromium-driver"
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
# moveorder with the research pipeline and the tests, at the versions the tests ran with (requirements.lock).
.venv/bin/python -m pip install -q -c requirements.lock -e ".[test,pipeline]"
# The real KataGo (from the katrain wheel on PyPI) and KataGo's small test network, for the tests
# and CPU runs. The network comes through the pipeline's own download step: from the offline
# mirror when one is given (MOVEORDER_MIRROR, or ../shared/data/mirror beside this checkout).
[ -x tools/katago/bin/katago ] || .venv/bin/moveorder install-katago --dest tools/katago
MIRROR=${MOVEORDER_MIRROR:-}
[ -n "$MIRROR" ] || { [ -d ../shared/data/mirror ] && MIRROR=../shared/data/mirror; } || true
.venv/bin/moveorder download --quiet \
  --url https://github.com/lightvector/KataGo/raw/master/cpp/tests/models/g170-b6c96-s175395328-d26788732.bin.gz \
  --sha256 f5d32604e3675c480c7c8f6aa579a1ea857135628a0afccc8fa56330fbacd38d \
  --dest tools/katago/models/g170-b6c96-s175395328-d26788732.bin.gz ${MIRROR:+--mirror "$MIRROR"}
echo "setup: done. Activate with: source .venv/bin/activate"
