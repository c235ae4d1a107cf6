#!/usr/bin/env bash
# Mutation testing of the pure modules, outside CI: it is slow (minutes a module on 2 cores).
#
#   bash scripts/mutation.sh                 # every module below
#   bash scripts/mutation.sh metrics loss    # some of them (a module by its name: captures is
#                                            # src/moveorder/search/captures.py)
#
# Each module is mutated by mutmut (pip install -e ".[dev]") against its own fast test file only, in a
# copy of src/, tests/ and config/ under $MUTATION_DIR (default /tmp/moveorder-mutation/MODULE), so the
# checkout is left alone; MUTATION_REF=COMMIT takes them from a commit instead of the working tree.
# One line a module: killed / all mutants and the score; the survivors' names follow (`mutmut show NAME`
# in that module's main/ folder prints the diff). docs/testing.md has the last results.
#
# Faster runs, for test files too slow to run once per mutant:
#   MUTATION_SELECT='not training'  # a pytest -k expression: only the tests it selects are run on mutants
#   MUTATION_ONLY='x__alive* x_capture_plan*'  # mutant names (globs, without the module's dotted prefix:
#                                   # x_NAME* for a function, xǁCLASSǁNAME* for a method): only these are run
#                                   # and counted, the rest of the module left unrun and uncounted
#   MUTATION_SURVIVORS=1            # after a run with the same MUTATION_DIR: the tests of now (or of
#                                   # MUTATION_REF) on the mutants that run left alive; the rest stay killed
#   MUTATION_CACHE_POOLS=1          # the real-game pools of tests/conftest.py made once per module and reused
#                                   # (MOVEORDER_TEST_POOLS); sound only for a module the pools are not made
#                                   # with (not archives, records, board, coords)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
PY=${PYTHON:-$REPO/.venv/bin/python}
MUTMUT=${MUTMUT:-$(dirname "$PY")/mutmut}
[ -x "$MUTMUT" ] || { echo "mutation: no $MUTMUT; pip install -e '.[dev]'" >&2; exit 2; }
BASE=${MUTATION_DIR:-/tmp/moveorder-mutation}
MODULES=("$@")
[ ${#MODULES[@]} -gt 0 ] || MODULES=(metrics loss coords board features report sweeps settings)
CHILDREN=${MUTATION_CHILDREN:-2}
# mutmut forks a process per mutant from one that has imported torch: with OpenMP's thread pool already
# started, a forked child can hang in its first parallel region (and count as killed by timeout).
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# A module's file, by its name, in a tree of src/ (the flat layout of older commits, or the subpackages).
module_file() { find "$1/src/moveorder" -name "$2.py" -not -name __init__.py | head -1; }

for m in "${MODULES[@]}"; do
  [ -n "$(module_file . "$m")" ] && [ -f "tests/test_$m.py" ] || { echo "mutation: no module or tests for $m" >&2; exit 2; }
  dir=$BASE/$m
  rerun=()
  if [ -n "${MUTATION_SURVIVORS:-}" ]; then  # only the mutants an earlier run in $dir left alive, on these tests
    [ -f "$dir/results.txt" ] || { echo "mutation: no earlier run in $dir to take the survivors of" >&2; exit 2; }
    mapfile -t rerun < <(grep -vE ': (killed|timeout)$' "$dir/results.txt" | grep -E '^ *moveorder\.' | sed -E 's/^ *//; s/: [a-z ]+$//')
    rm -rf "$dir/main/src" "$dir/main/tests" "$dir/main/config"
  else
    rm -rf "$dir" && mkdir -p "$dir/main"
  fi
  if [ -n "${MUTATION_REF:-}" ]; then  # the tests and code of a commit (the "before" of docs/testing.md)
    git archive "$MUTATION_REF" src tests config | tar -x -C "$dir/main"
  else
    cp -r src tests config "$dir/main/"
  fi
  find "$dir/main" -name __pycache__ -prune -exec rm -rf {} +
  # The tests find ../shared (the leelaz fixture network) beside the checkout; mutmut runs them from a
  # copy in main/mutants/, so main/shared is there too.
  ln -sfn "$(cd "$REPO/.." && pwd)/shared" "$dir/shared"
  ln -sfn "$(cd "$REPO/.." && pwd)/shared" "$dir/main/shared"
  grep -v '^\[tool.mutmut\]' pyproject.toml >"$dir/main/pyproject.toml"
  file=$(module_file "$dir/main" "$m")
  file=${file#"$dir/main/"}
  dotted=${file#src/}
  dotted=${dotted%.py}
  dotted=${dotted//\//.}
  selection="tests/test_$m.py"
  [ -z "${MUTATION_SELECT:-}" ] || selection=$(printf '%s\n    -k\n    %s' "$selection" "$MUTATION_SELECT")
  cat >"$dir/main/setup.cfg" <<EOF
[mutmut]
source_paths = src/
only_mutate = $file
pytest_add_cli_args_test_selection =
    $selection
pytest_add_cli_args = -p no:cacheprovider
also_copy = config/
EOF
  only=()
  for g in ${MUTATION_ONLY:-}; do only+=("$dotted.$g"); done
  [ ${#rerun[@]} -gt 0 ] || rerun=("${only[@]}")
  pools=(env)
  [ -z "${MUTATION_CACHE_POOLS:-}" ] || pools=(env "MOVEORDER_TEST_POOLS=$dir/pools")
  (cd "$dir/main" && "${pools[@]}" "$MUTMUT" run --max-children "$CHILDREN" "${rerun[@]}" >"$dir/run.log" 2>&1) || {
    echo "mutation: mutmut failed for $m (log: $dir/run.log)" >&2
    tail -20 "$dir/run.log" >&2
    exit 1
  }
  (cd "$dir/main" && "$MUTMUT" results --all true >"$dir/results.txt" 2>&1 || true)
  "$PY" - "$m" "$dir/results.txt" "${only[@]}" <<'EOF'
import collections, fnmatch, sys
module, path, only = sys.argv[1], sys.argv[2], sys.argv[3:]
status = {}
for line in open(path):
    if ":" in line and line.strip().startswith("moveorder."):
        name, st = line.strip().rsplit(":", 1)
        if not only or any(fnmatch.fnmatch(name.strip(), g) for g in only):
            status[name.strip()] = st.strip()
count = collections.Counter(status.values())
total = len(status)
killed = count.get("killed", 0) + count.get("timeout", 0)
print(f"{module}: {killed} / {total} killed ({100 * killed / max(total, 1):.1f}%)  {dict(count)}")
for name, st in sorted(status.items()):
    if st not in ("killed", "timeout"):
        print(f"  {st}: {name}")
EOF
done
