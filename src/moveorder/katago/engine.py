"""A client for KataGo's analysis engine: JSON lines over a real subprocess's stdin/stdout.

:class:`KataGoEngine` owns one ``katago analysis`` process.  ``analyze``
sends many queries at once (each with ``analyzeTurns``), matches the replies
by ``(id, turnNumber)`` however they are ordered, drains stderr into a log
file on a thread, raises :class:`KataGoError` for an ``error`` reply naming
the query, logs ``warning`` replies with their query, and gives up on a
query after ``timeout`` seconds without progress.  If the process dies, it
is restarted and every turn without an answer is sent again, so each turn is
answered exactly once.  Finished analyses go to an optional
:class:`AnalysisCache` (an append-only JSONL file keyed by position) as they
arrive, so a rerun or a crash never repeats finished work.

Repeatability.  KataGo's answer for a position depends on its neural-net
cache, that is on what the process analysed before: the same 21 positions
analysed forwards and backwards by one process (one thread, 8 visits) gave
different leads at 15 of them, and two analysis threads sharing the cache
make the order a race (CI saw one lead of 21 differ between two runs).
:class:`EnginePool` removes both: each of its processes analyses one
position at a time, after KataGo's ``clear_cache`` action, so an analysis
is a function of the position alone (its moves, komi, rules, visits and
model: :func:`position_key`), whatever was analysed before, in whichever
process, in whichever order.  That costs nothing measurable on a CPU: 41
positions took 9.8 s in two such processes against 9.1 s in one process
with two threads sharing the cache (8 visits; 106 s against 107 s at 100).
:class:`KataGoEngine` alone (``analyze`` with many threads and batches) is
the fast, unrepeatable way for a GPU.

:func:`opencl_tuning` picks the OpenCL tuning KataGo is given: on a CPU, the
file :mod:`moveorder.katago.install` writes (KataGo's own tuning takes over 20
minutes there); on a GPU none, so KataGo tunes for that GPU (once, kept in its
home folder), or a tuning file of the user's.

:func:`opencl_device` reads which OpenCL device KataGo chose from its stderr log.  The device is
KataGo's choice among the platforms the OpenCL loader lists, not ours: on a machine whose
``/etc/OpenCL/vendors`` names pocl and not the GPU's driver (the H200s this project ran on: NVIDIA's
``libnvidia-opencl.so`` installed, no ``nvidia.icd``), KataGo runs on the CPU beside an idle GPU,
about 40 times slower (70 positions a second against 2,600 at 2 visits, b6c96).

:func:`analysis_config` writes the settings that make a search repeatable:
``nnRandomize = false``, a fixed ``nnRandSeed``, ``wideRootNoise = 0`` and
``reportAnalysisWinratesAs = SIDETOMOVE`` (so every score lead is from the
side to move at the analysed position), and by default ``nnMaxBatchSize = 1``:
when analysis threads share network batches, a position's outputs depend on
what it was batched with (up to 0.06 points at 8 visits).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

log = logging.getLogger(__name__)


class KataGoError(RuntimeError):
    """KataGo answered a query with an error, or could not be kept running."""


def opencl_tuning(tuning: str, cpu_tuner: Optional[Path], gpu: bool) -> Optional[Path]:
    """The OpenCL tuning file to give KataGo, or None: KataGo then tunes for its device itself on first use.

    ``tuning`` (``katago.tuning``): ``auto``, the CPU's tuning ``cpu_tuner`` (written for pocl: small
    work-groups, FP16 off) where no GPU is seen and none on a GPU; ``cpu``, the CPU's always;
    ``katago``, none; anything else, the path of a tuning file of yours.  CUDA, TensorRT and Eigen
    builds of KataGo read no OpenCL tuning.
    """
    if tuning == "cpu" or (tuning == "auto" and not gpu):
        return cpu_tuner
    if tuning in ("auto", "katago"):
        return None
    return Path(tuning)


_DEVICE_LINE = re.compile(r"Using OpenCL Device \d+: (.*?)(?= OpenCL \d|$)", re.MULTILINE)


def opencl_device(stderr_text: str) -> Optional[str]:
    """The OpenCL device KataGo last said it uses (``Using OpenCL Device 0: NAME (VENDOR) OpenCL ...``
    in its stderr), as ``NAME (VENDOR)``; None where there is no such line (a CUDA, TensorRT or Eigen
    build, or a process that has not started its network yet)."""
    found = _DEVICE_LINE.findall(stderr_text)
    return found[-1].strip() if found else None


def is_cpu_device(device: str) -> bool:
    """Whether an OpenCL device named as :func:`opencl_device` gives it is pocl's CPU device
    (``pthread-haswell-AMD EPYC ...``, ``cpu-skylake-avx512-Intel(R) Xeon(R) ...``)."""
    return device.startswith(("pthread-", "cpu-"))


def analysis_config(
    path: Path,
    tuner_file: Optional[Path],
    threads: int = 2,
    max_batch: int = 1,
    seed: str = "moveorder",
    extra: Optional[Dict[str, object]] = None,
    gpu: bool = False,
) -> Path:
    """Write an analysis-engine config with repeatable settings; return its path.

    ``gpu``: KataGo decides on FP16 itself (a GPU's tensor cores); otherwise FP16 is off (pocl on a CPU).
    """
    settings: Dict[str, object] = {
        "logToStderr": "false",
        "logAllRequests": "false",
        "logSearchInfo": "false",
        "reportAnalysisWinratesAs": "SIDETOMOVE",
        "nnRandomize": "false",
        "nnRandSeed": seed,
        "wideRootNoise": 0.0,
        "numAnalysisThreads": threads,
        "numSearchThreadsPerAnalysisThread": 1,
        "nnMaxBatchSize": max_batch,
        "nnCacheSizePowerOfTwo": 18,
        "nnMutexPoolSizePowerOfTwo": 14,
        "openclUseFP16": "auto" if gpu else "false",
    }
    if tuner_file is not None:
        settings["openclTunerFile"] = str(Path(tuner_file).resolve())
    settings.update(extra or {})
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k} = {v}\n" for k, v in settings.items()))
    return path


def position_key(moves: List[List[str]], turn: int, komi: float, rules: str, visits: int, model: str) -> str:
    """What makes an analysis unique: the moves up to ``turn`` (order matters), komi, rules, visits, model."""
    text = json.dumps([moves[:turn], komi, rules, visits, Path(model).name])
    return hashlib.sha1(text.encode()).hexdigest()


class AnalysisCache:
    """Finished analyses by position key, appended to a JSONL file as they arrive.

    ``seeds``: files of the same format made before (another job's), read first and never written.
    """

    def __init__(self, path: Optional[Path], seeds: Sequence[Path] = ()):
        self.path = Path(path) if path else None
        self.data: Dict[str, dict] = {}
        for seed in seeds:
            self._read(Path(seed), strict=True)
        if self.path and self.path.exists():
            self._read(self.path, strict=False)
        self._lock = threading.Lock()

    def _read(self, path: Path, strict: bool) -> None:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                try:
                    entry = json.loads(line)
                    key, analysis = entry["key"], entry["analysis"]
                except json.JSONDecodeError as err:
                    if not strict:
                        continue  # a line cut off by a crash
                    raise ValueError(f"{path}: line {number}: not JSON ({err})") from None
                except (KeyError, TypeError):
                    raise ValueError(
                        f"{path}: line {number}: not an analysis (expected an object with its key and analysis)"
                    ) from None
                self.data[key] = analysis

    def get(self, key: str) -> Optional[dict]:
        return self.data.get(key)

    def put(self, key: str, analysis: dict) -> None:
        with self._lock:
            self.data[key] = analysis
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(_entry(key, analysis))

    def write(self, path: Path, keys: Iterable[str]) -> None:
        """The analyses of ``keys`` (each held here), as a file of this format (a seed), written whole or not at all."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for k in keys:
                f.write(_entry(k, self.data[k]))
        tmp.replace(path)


def _entry(key: str, analysis: dict) -> str:
    """One line of an analyses file."""
    return json.dumps({"key": key, "analysis": analysis}) + "\n"


class KataGoEngine:
    """One ``katago analysis`` process, restarted if it dies."""

    def __init__(
        self,
        command: List[str],
        stderr_log: Optional[Path] = None,
        timeout: float = 600.0,
        max_restarts: int = 3,
        env: Optional[Dict[str, str]] = None,
    ):
        self.command = command
        self.stderr_log = Path(stderr_log) if stderr_log else None
        self.timeout = timeout
        self.max_restarts = max_restarts
        self.env = env
        self.proc: Optional[subprocess.Popen] = None
        self.restarts = 0
        self.sent_queries = 0
        self._replies: "queue.Queue" = queue.Queue()
        self._threads: List[threading.Thread] = []

    @classmethod
    def for_model(cls, binary: Path, model: Path, config: Path, **kw) -> "KataGoEngine":
        return cls([str(binary), "analysis", "-config", str(config), "-model", str(model)], **kw)

    # --- process ---------------------------------------------------------------
    def start(self) -> None:
        stderr = open(self.stderr_log, "ab") if self.stderr_log else subprocess.PIPE
        if self.stderr_log:
            self.stderr_log.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=self.env,
            bufsize=1,
            text=True,
        )
        self._replies = queue.Queue()
        reader = threading.Thread(target=self._read_stdout, args=(self.proc, self._replies), daemon=True)
        reader.start()
        self._threads = [reader]
        if not self.stderr_log:
            drain = threading.Thread(target=self._drain, args=(self.proc,), daemon=True)
            drain.start()
            self._threads.append(drain)

    @staticmethod
    def _read_stdout(proc: subprocess.Popen, out: "queue.Queue") -> None:
        for line in proc.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                out.put(json.loads(line))
            except json.JSONDecodeError:
                log.warning("katago printed a non-JSON line: %s", line[:200])
        out.put(None)  # end of stream: the process has exited

    @staticmethod
    def _drain(proc: subprocess.Popen) -> None:
        for line in proc.stderr:
            log.debug("katago: %s", line.rstrip())

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    # --- protocol --------------------------------------------------------------
    def _send(self, query: dict) -> bool:
        """Write one query; False when the process has closed its input (it has exited, or is exiting,
        before ``poll`` sees it): the caller restarts it."""
        try:
            self.proc.stdin.write(json.dumps(query) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return False
        self.sent_queries += 1
        return True

    def analyze(self, queries: Iterable[dict], on_result=None) -> Dict[Tuple[str, int], dict]:
        """Send every query (each with ``id`` and ``analyzeTurns``); return replies by (id, turn).

        ``on_result(id, turn, reply)`` is called as each reply arrives.
        """
        pending: Dict[str, dict] = {}
        missing: Dict[str, set] = {}
        for q in queries:
            if "id" not in q or "analyzeTurns" not in q:
                raise ValueError("each query needs an id and analyzeTurns")
            pending[q["id"]] = q
            missing[q["id"]] = set(q["analyzeTurns"])
        results: Dict[Tuple[str, int], dict] = {}
        if not pending:
            return results
        self._ensure_running("before sending queries")
        self._send_missing(pending, missing)
        last_progress = time.time()
        while any(missing.values()):
            try:
                msg = self._replies.get(timeout=1.0)
            except queue.Empty:
                if time.time() - last_progress > self.timeout:
                    waiting = [f"{i}:{sorted(t)}" for i, t in missing.items() if t][:5]
                    raise KataGoError(f"no reply from katago for {self.timeout:.0f} s; waiting for {waiting}")
                continue
            if msg is None:  # the engine died: restart and resend what has no answer
                self._restart(f"resending {sum(len(t) for t in missing.values())} turns")
                self._send_missing(pending, missing)
                continue
            qid = msg.get("id")
            if "error" in msg:
                q = pending.get(qid)
                raise KataGoError(
                    f"katago error for query {qid!r}: {msg['error']} "
                    f"(field {msg.get('field', '?')}); query: {json.dumps(q)[:500]}"
                )
            if "warning" in msg:
                log.warning("katago warning for query %r: %s (field %s)", qid, msg["warning"], msg.get("field"))
                continue
            turn = msg.get("turnNumber")
            if qid not in missing or turn not in missing[qid]:
                continue  # a duplicate from before a restart, or another caller's
            missing[qid].discard(turn)
            results[(qid, turn)] = msg
            last_progress = time.time()
            if on_result:
                on_result(qid, turn, msg)
        return results

    def clear_cache(self) -> None:
        """Empty the process's neural-net cache (KataGo's ``clear_cache`` action) and wait for the answer.

        A process that died meanwhile is restarted: a fresh one has an empty cache too.
        """
        if self._ensure_running("before clearing its cache"):
            return  # a fresh process has an empty cache
        if not self._send({"id": "clear_cache", "action": "clear_cache"}):
            self._restart("its input closed before clearing its cache")
            return
        deadline = time.time() + self.timeout
        while True:
            try:
                msg = self._replies.get(timeout=1.0)
            except queue.Empty:
                if time.time() > deadline:
                    raise KataGoError(f"katago did not answer clear_cache in {self.timeout:.0f} s")
                continue
            if msg is None:  # a fresh process has an empty cache too
                self._restart("while clearing its cache")
                return
            if msg.get("action") == "clear_cache":
                return
            if "error" in msg:
                raise KataGoError(f"katago error for clear_cache: {msg['error']}")

    def analyze_alone(self, query: dict, turn: int) -> dict:
        """One turn of ``query``, analysed with an empty network cache: a function of the position alone."""
        self.clear_cache()
        return self.analyze([{**query, "analyzeTurns": [turn]}])[(query["id"], turn)]

    def _ensure_running(self, doing: str) -> bool:
        """Start the process if it is not running; one that exited since it was started counts as a restart.

        Returns True when a new process was started.
        """
        if self.alive():
            return False
        if self.proc is None:
            self.start()
        else:
            self._restart(doing)
        return True

    def _restart(self, doing: str) -> None:
        """The process has exited: start another, or give up after ``max_restarts``."""
        self.restarts += 1
        code = self.proc.poll() if self.proc else None
        if self.restarts > self.max_restarts:
            raise KataGoError(f"katago exited (code {code}) {self.restarts} times; giving up")
        log.warning("katago exited (code %s); restarting, %s", code, doing)
        self.close()
        self.start()

    def _send_missing(self, pending: Dict[str, dict], missing: Dict[str, set]) -> None:
        """Send every turn still without an answer; a process whose input closed is restarted and sent all again."""
        while not all(
            self._send({**pending[qid], "analyzeTurns": sorted(turns)}) for qid, turns in missing.items() if turns
        ):
            self._restart("its input closed while sending queries")


class EnginePool:
    """``size`` engine processes, each analysing one position at a time from an empty network cache.

    ``analyze`` takes the same queries as :meth:`KataGoEngine.analyze` and
    returns the same replies, but every (query, turn) is analysed alone
    (:meth:`KataGoEngine.analyze_alone`), by whichever process is free, so the
    answers do not depend on the order, the batch or the number of processes.
    ``make_engine(i)`` builds the i-th engine (one analysis thread).
    """

    def __init__(self, make_engine: Callable[[int], KataGoEngine], size: int):
        if size < 1:
            raise ValueError(f"an engine pool needs at least one process, not {size}")
        self.make_engine = make_engine
        self.size = size
        self.engines: List[KataGoEngine] = []

    def __enter__(self):
        self.engines = [self.make_engine(i) for i in range(self.size)]
        for e in self.engines:
            e.start()
        return self

    def __exit__(self, *exc):
        for e in self.engines:
            e.close()

    @property
    def restarts(self) -> int:
        return sum(e.restarts for e in self.engines)

    def analyze(self, queries: Iterable[dict], on_result=None) -> Dict[Tuple[str, int], dict]:
        tasks: "queue.Queue" = queue.Queue()
        for q in queries:
            if "id" not in q or "analyzeTurns" not in q:
                raise ValueError("each query needs an id and analyzeTurns")
            for t in sorted(set(q["analyzeTurns"])):
                tasks.put((q, t))
        results: Dict[Tuple[str, int], dict] = {}
        lock = threading.Lock()
        failed: List[BaseException] = []

        def work(engine: KataGoEngine) -> None:
            while not failed:
                try:
                    q, t = tasks.get_nowait()
                except queue.Empty:
                    return
                try:
                    reply = engine.analyze_alone(q, t)
                except BaseException as e:  # noqa: BLE001 - handed to the caller below
                    with lock:
                        failed.append(e)
                    return
                with lock:
                    results[(q["id"], t)] = reply
                    if on_result:
                        on_result(q["id"], t, reply)

        workers = [threading.Thread(target=work, args=(e,), daemon=True) for e in self.engines]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        if failed:
            raise failed[0]
        return results


def default_env() -> Dict[str, str]:
    """The environment for KataGo: pocl's kernel cache in a writable place."""
    env = dict(os.environ)
    env.setdefault("POCL_CACHE_DIR", str(Path.home() / ".cache" / "pocl"))
    return env
