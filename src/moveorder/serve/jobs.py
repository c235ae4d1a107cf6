"""The page's searches: one at a time, in a worker thread, each with its place in the queue, its progress,
and a way to stop it.

A :class:`Job` is a position already checked (every refusal happens before it is queued, in the request);
:class:`Worker` runs the jobs in the order they came, one at a time, on networks it loads once
(:class:`Networks`).  A job stops when it is cancelled or when nobody has asked about it for
:data:`moveorder.settings.SERVE_ABANDONED` seconds (the page asks about its job twice a second while it
waits): the network's calls check for it (:attr:`moveorder.nets.likelihood.PolicyLikelihood.on_batch`),
so a search stops within one network call.
"""

from __future__ import annotations

import collections
import itertools
import logging
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Deque, Dict, Optional, Tuple

from moveorder import settings as S

log = logging.getLogger(__name__)


class Stopped(Exception):
    """Raised inside a search to stop it: cancelled, or left by the page that asked for it."""


@dataclass
class Job:
    """One search asked for by the page."""

    id: str
    folder: Path  # the job's own folder: the position file and the answer's files
    run: Callable[["Job"], dict]  # the search itself, run by the worker; returns the answer
    state: str = "queued"  # queued, running, done, failed, cancelled
    answer: Optional[dict] = None
    error: str = ""
    done: int = 0  # progress reported so far (iterations or network evaluations)
    total: int = 0
    evaluations: int = 0  # positions the network evaluated for this job
    expected: int = 0  # about how many it will (the beam's width x moves x orientations); 0: unknown
    cancel: threading.Event = field(default_factory=threading.Event)
    seen: float = field(default_factory=time.monotonic)  # when the page last asked about it
    started: float = 0.0
    finished: float = 0.0

    @property
    def fraction(self) -> float:
        """How far the search is, 0 to 1 (the larger of what it reported and its evaluations' share)."""
        if self.state == "done":
            return 1.0
        parts = [self.done / self.total if self.total else 0.0]
        if self.expected:
            parts.append(self.evaluations / self.expected)
        return min(0.99, max(parts))

    # tqdm's protocol, which the search reports to (moveorder.search.inference.infer_position)
    def reset(self, total: int) -> None:
        self.total, self.done = int(total), 0

    def update(self, k: int = 1) -> None:
        self.check()
        self.done += int(k)

    def check(self) -> None:
        """Raise :class:`Stopped` if the job was cancelled or nobody asks about it any more."""
        if self.cancel.is_set():
            raise Stopped("cancelled")
        if time.monotonic() - self.seen > S.SERVE_ABANDONED:
            self.cancel.set()
            raise Stopped(f"nobody asked about it for {S.SERVE_ABANDONED:g} s")


class Networks:
    """The networks the worker has loaded, each once: key -> the loaded network (at most ``size`` kept)."""

    def __init__(self, size: int = 2):
        self.size = size
        self.loaded: "collections.OrderedDict[Tuple, object]" = collections.OrderedDict()

    def get(self, key: Tuple, load: Callable[[], object]):
        """The network of ``key``, loaded by ``load`` the first time it is asked for."""
        if key not in self.loaded:
            self.loaded[key] = load()
            while len(self.loaded) > self.size:
                self.loaded.popitem(last=False)
        self.loaded.move_to_end(key)
        return self.loaded[key]


class Worker:
    """Runs queued jobs one at a time in a thread of its own; keeps the last finished ones' answers."""

    def __init__(self, queue_size: int = S.SERVE_QUEUE, keep: int = S.SERVE_KEEP):
        self.queue_size, self.keep = queue_size, keep
        self.jobs: Dict[str, Job] = {}
        self.waiting: Deque[Job] = collections.deque()
        self.finished: Deque[Job] = collections.deque()
        self.running: Optional[Job] = None
        self.lock = threading.Condition()
        self.ids = itertools.count(1)
        self.closed = False
        self.thread = threading.Thread(target=self._loop, name="moveorder-search", daemon=True)
        self.thread.start()

    def new_id(self) -> str:
        with self.lock:
            return f"{next(self.ids)}"

    def submit(self, job: Job) -> int:
        """Queue ``job``; its place (0: it runs next).  ValueError when the queue is full."""
        with self.lock:
            if len(self.waiting) >= self.queue_size:
                raise ValueError(
                    f"the server is busy: {len(self.waiting)} searches are waiting (at most {self.queue_size}); "
                    "ask again when one has finished"
                )
            self.jobs[job.id] = job
            self.waiting.append(job)
            self.lock.notify()
            return len(self.waiting) - 1 + (self.running is not None)

    def place(self, job: Job) -> int:
        """How many searches run or wait before ``job`` (0 once it runs)."""
        with self.lock:
            if job.state != "queued":
                return 0
            return (self.running is not None) + next((k for k, j in enumerate(self.waiting) if j is job), 0)

    def get(self, job_id: str) -> Optional[Job]:
        with self.lock:
            job = self.jobs.get(job_id)
        if job is not None:
            job.seen = time.monotonic()
        return job

    def cancel(self, job: Job) -> None:
        with self.lock:
            job.cancel.set()
            if job.state == "queued":
                self.waiting.remove(job)
                self._finish(job, "cancelled", error="cancelled")

    def close(self) -> None:
        with self.lock:
            self.closed = True
            for job in list(self.waiting):
                job.cancel.set()
            if self.running is not None:
                self.running.cancel.set()
            self.lock.notify()
        self.thread.join(timeout=30)

    def _next(self) -> Optional[Job]:
        with self.lock:
            while not self.closed:
                while self.waiting:
                    job = self.waiting.popleft()
                    try:
                        job.check()  # left by its page while it waited: not run for nobody
                    except Stopped as why:
                        self._finish(job, "cancelled", error=str(why))
                        continue
                    job.state, job.started, self.running = "running", time.monotonic(), job
                    return job
                self.lock.wait(timeout=1.0)
        return None

    def _loop(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            state, answer, error = "done", None, ""
            try:
                answer = job.run(job)
            except Stopped as why:
                state, error = "cancelled", str(why)
            except (ValueError, OSError, RuntimeError) as err:  # the command line's refusals
                state, error = "failed", str(err)
            except Exception as err:  # noqa: BLE001 - the worker serves on whatever one search does
                log.exception("search %s failed", job.id)
                state, error = "failed", f"the search failed: {type(err).__name__}: {err}"
            with self.lock:
                job.answer = answer
                self.running = None
                self._finish(job, state, error)

    def _finish(self, job: Job, state: str, error: str = "") -> None:
        """Mark ``job`` finished (the lock held); forget the oldest finished jobs past ``keep``."""
        job.state, job.error, job.finished = state, error, time.monotonic()
        log.info("search %s %s%s", job.id, state, f": {error}" if error else "")
        self.finished.append(job)
        while len(self.finished) > self.keep:
            old = self.finished.popleft()
            self.jobs.pop(old.id, None)
            shutil.rmtree(old.folder, ignore_errors=True)
