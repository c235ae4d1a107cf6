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

:func:`analysis_config` writes the settings that make results repeatable:
``nnRandomize = false``, a fixed ``nnRandSeed``, ``wideRootNoise = 0`` and
``reportAnalysisWinratesAs = SIDETOMOVE`` (so every score lead is from the
side to move at the analysed position), and by default ``nnMaxBatchSize = 1``:
when analysis threads share network batches, a position's outputs depend on
what it was batched with, and at 8 visits the leads of one set then moved by
up to 0.06 points from run to run; one position a batch gave identical
results run after run, at the same speed on a CPU (66-69 s either way for
a 20-move set).  On a GPU larger batches are faster, at that price.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

log = logging.getLogger(__name__)


class KataGoError(RuntimeError):
    """KataGo answered a query with an error, or could not be kept running."""


def analysis_config(path: Path, tuner_file: Optional[Path], threads: int = 2, max_batch: int = 1,
                    seed: str = "moveorder", extra: Optional[Dict[str, object]] = None) -> Path:
    """Write an analysis-engine config with repeatable settings; return its path."""
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
        "openclUseFP16": "false",
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
    """Finished analyses by position key, appended to a JSONL file as they arrive."""

    def __init__(self, path: Optional[Path]):
        self.path = Path(path) if path else None
        self.data: Dict[str, dict] = {}
        if self.path and self.path.exists():
            with open(self.path, encoding="utf-8") as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut off by a crash
                    self.data[entry["key"]] = entry["analysis"]
        self._lock = threading.Lock()

    def get(self, key: str) -> Optional[dict]:
        return self.data.get(key)

    def put(self, key: str, analysis: dict) -> None:
        with self._lock:
            self.data[key] = analysis
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"key": key, "analysis": analysis}) + "\n")


class KataGoEngine:
    """One ``katago analysis`` process, restarted if it dies."""

    def __init__(self, command: List[str], stderr_log: Optional[Path] = None, timeout: float = 600.0,
                 max_restarts: int = 3, env: Optional[Dict[str, str]] = None):
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
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr, env=self.env, bufsize=1, text=True)
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
    def _send(self, query: dict) -> None:
        self.proc.stdin.write(json.dumps(query) + "\n")
        self.proc.stdin.flush()
        self.sent_queries += 1

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
        if not self.alive():
            self.start()
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
                self.restarts += 1
                code = self.proc.poll() if self.proc else None
                if self.restarts > self.max_restarts:
                    raise KataGoError(f"katago exited (code {code}) {self.restarts} times; giving up")
                log.warning("katago exited (code %s); restarting and resending %d turns", code,
                            sum(len(t) for t in missing.values()))
                self.close()
                self.start()
                self._send_missing(pending, missing)
                continue
            qid = msg.get("id")
            if "error" in msg:
                q = pending.get(qid)
                raise KataGoError(f"katago error for query {qid!r}: {msg['error']} "
                                  f"(field {msg.get('field', '?')}); query: {json.dumps(q)[:500]}")
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

    def _send_missing(self, pending: Dict[str, dict], missing: Dict[str, set]) -> None:
        for qid, turns in missing.items():
            if turns:
                self._send({**pending[qid], "analyzeTurns": sorted(turns)})


def default_env() -> Dict[str, str]:
    """The environment for KataGo: pocl's kernel cache in a writable place."""
    env = dict(os.environ)
    env.setdefault("POCL_CACHE_DIR", str(Path.home() / ".cache" / "pocl"))
    return env
