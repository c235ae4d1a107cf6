"""moveorder.katago.engine: the real engine (installed by scripts/setup.sh) and the client's protocol handling."""

import math
import os
import signal
import sys

import pytest

from helpers import KATAGO, REPO
from helpers import KATAGO_SMALL_MODEL as SMALL
from helpers import KATAGO_TUNER as TUNER
from moveorder.go import coords
from moveorder.katago.engine import EnginePool, KataGoEngine, KataGoError, analysis_config, default_env

FAKE = [sys.executable, str(REPO / "tests/fake_katago.py")]


def query(qid, moves, turns, visits=8, **kw):
    return {
        "id": qid,
        "moves": moves,
        "rules": "chinese",
        "komi": 7.5,
        "boardXSize": 19,
        "boardYSize": 19,
        "analyzeTurns": list(turns),
        "maxVisits": visits,
        **kw,
    }


def test_real_engine_policy_and_score_leads(engine):
    moves = [["B", "Q16"], ["W", "D4"], ["B", "Q4"], ["W", "D16"]]
    res = engine.analyze([query("open", moves, range(5), includePolicy=True)])
    assert sorted(t for _, t in res) == [0, 1, 2, 3, 4]
    for (_, t), r in res.items():
        legal = [p for p in r["policy"] if p >= 0]
        assert len(r["policy"]) == 362 and len(legal) == 362 - t
        assert math.isclose(sum(legal), 1.0, abs_tol=1e-3)
        assert math.isfinite(r["rootInfo"]["scoreLead"])
    # KataGo's policy runs from the top row: moveorder.go.coords' flat index, checked against the engine.
    policy = res[("open", 4)]["policy"]
    occupied = sorted(k for k, p in enumerate(policy[:361]) if p == -1)
    assert occupied == sorted(coords.to_flat(coords.from_gtp(m)) for _, m in moves)
    # Black gets five free stones while White passes: Black leads by far. With the side to move
    # reported, the lead flips sign between Black's turn and White's.
    lopsided = [
        ["B", "Q16"],
        ["W", "pass"],
        ["B", "D4"],
        ["W", "pass"],
        ["B", "Q4"],
        ["W", "pass"],
        ["B", "D16"],
        ["W", "pass"],
        ["B", "K10"],
    ]
    res = engine.analyze([query("lop", lopsided, [8, 9])])
    assert res[("lop", 8)]["rootInfo"]["scoreLead"] > 10  # Black to move
    assert res[("lop", 9)]["rootInfo"]["scoreLead"] < -10  # White to move


def test_a_pool_analysis_depends_on_the_position_alone(tmp_path):
    """Each position analysed from an empty network cache: forwards by two processes, and backwards
    one turn a query by one process, every lead of every move is the same. (One process sharing its
    cache gives different leads at 15 of these 21 positions forwards and backwards: katago.py.)"""
    from helpers import OPENING

    moves = [["BW"[i % 2], coords.to_gtp(coords.from_sgf(m))] for i, m in enumerate(OPENING)]

    def make(run):
        def engine(i):
            cfg = analysis_config(tmp_path / f"{run}/analysis-{i}.cfg", TUNER, threads=1)
            return KataGoEngine.for_model(
                KATAGO, SMALL, cfg, stderr_log=tmp_path / f"{run}/stderr-{i}.log", env=default_env()
            )

        return engine

    with EnginePool(make("forwards"), 2) as pool:
        forwards = pool.analyze([query("o", moves, range(len(moves) + 1))])
    with EnginePool(make("backwards"), 1) as pool:
        backwards = pool.analyze([query(f"o{t}", moves, [t]) for t in reversed(range(len(moves) + 1))])

    def leads(res):
        return {
            t: (r["rootInfo"]["scoreLead"], sorted((m["move"], m["scoreLead"]) for m in r["moveInfos"]))
            for (_, t), r in res.items()
        }

    assert len(forwards) == len(OPENING) + 1
    assert leads(forwards) == leads(backwards)


def test_killed_engine_is_restarted_and_every_turn_answered_once(engine, monkeypatch):
    """The engine dies with the query in its input and no reply written (stopped before the query is
    sent, killed as soon as it is): whatever the machine's load, a restart, and every turn answered
    once. (Killed half-way, a turn answered before the death is not asked again: the stand-in's die-once.)"""
    moves = [["B", "Q16"], ["W", "D4"], ["B", "Q4"], ["W", "D16"], ["B", "C3"], ["W", "C4"]]
    moves += [["B", "R10"], ["W", "C10"], ["B", "K16"], ["W", "K4"]]
    seen = []
    victim = engine.proc
    send = engine._send

    def send_then_kill(q):
        ok = send(q)
        if engine.proc is victim and victim.poll() is None:
            os.kill(victim.pid, signal.SIGKILL)
        return ok

    before, sent = engine.restarts, engine.sent_queries
    os.kill(victim.pid, signal.SIGSTOP)  # it reads nothing and answers nothing until killed
    monkeypatch.setattr(engine, "_send", send_then_kill)
    res = engine.analyze([query("k", moves, range(11), visits=16)], on_result=lambda q, t, r: seen.append((q, t)))
    assert victim.wait(timeout=300) == -signal.SIGKILL and engine.proc is not victim  # at once: killed
    assert engine.restarts == before + 1 and engine.sent_queries == sent + 2  # the query, then again
    assert sorted(t for _, t in res) == list(range(11))
    assert sorted(seen) == sorted(set(seen)) and len(seen) == 11


def test_real_engine_error_and_warning_replies(engine, caplog):
    """KataGo's own replies: a komi it refuses is an error naming the query and the field; an unknown
    field is a warning (logged with the query) and the query is still answered."""
    for komi in (1000, 7.25):
        with pytest.raises(KataGoError, match=r"'komi'.*half-integer.*\(field komi\)"):
            engine.analyze([query("komi", [], [0], komi=komi)])
    res = engine.analyze([query("typo", [["B", "Q16"]], [0, 1], visits=2, maxVisit=9)])
    assert sorted(res) == [("typo", 0), ("typo", 1)]
    assert "Unexpected or unused field" in caplog.text and "'typo'" in caplog.text and "maxVisit" in caplog.text


# --- the protocol layer, against a stand-in process -----------------------------------


def fake(mode, *extra, timeout=300.0):
    """The stand-in engine; ``timeout``: how long the client waits for a reply that normally comes at once
    (a limit far above a loaded machine's delays, and above the ``share`` mode's own wait)."""
    return KataGoEngine(FAKE + [mode, *map(str, extra)], timeout=timeout)


def test_out_of_order_replies_and_warnings(caplog):
    with fake("normal") as eng:
        res = eng.analyze([query("a", [], [0, 1, 2]), query("warn", [], [5])])
    assert sorted(res) == [("a", 0), ("a", 1), ("a", 2), ("warn", 5)]
    assert "Unexpected field" in caplog.text and "'warn'" in caplog.text


def test_error_reply_names_the_query():
    with fake("normal") as eng, pytest.raises(KataGoError, match=r"'bad'.*komi"):
        eng.analyze([query("bad", [], [0])])


def test_timeout_without_replies():
    with fake("silent", timeout=1.5) as eng, pytest.raises(KataGoError, match="no reply"):
        eng.analyze([query("a", [], [0])])


def test_death_restart_resends_only_missing(tmp_path):
    with fake("die-once", tmp_path / "died") as eng:
        res = eng.analyze([query("a", [], [0, 1, 2, 3])])
    assert eng.restarts == 1 and sorted(t for _, t in res) == [0, 1, 2, 3]
    assert eng.sent_queries == 2


def test_pool_clears_the_cache_before_every_position_and_answers_each_turn_once(tmp_path):
    # each fake holds its first position until two processes have one: the work must be shared out
    with EnginePool(lambda i: fake("share", tmp_path, 2), 3) as pool:
        seen = []
        res = pool.analyze(
            [query("a", [], [0, 1, 2, 3]), query("b", [], [7, 5])], on_result=lambda q, t, r: seen.append((q, t))
        )
    assert sorted(res) == [("a", 0), ("a", 1), ("a", 2), ("a", 3), ("b", 5), ("b", 7)]
    assert sorted(seen) == sorted(res)
    assert all(r["cleared"] for r in res.values())
    assert len({r["pid"] for r in res.values()}) > 1  # the work is shared out


def test_pool_hands_an_engine_error_to_the_caller():
    with EnginePool(lambda i: fake("normal"), 2) as pool, pytest.raises(KataGoError, match=r"'bad'.*komi"):
        pool.analyze([query("a", [], [0, 1]), query("bad", [], [0])])


def test_an_engine_whose_input_closed_before_poll_sees_it_is_restarted(tmp_path):
    """A write to a process that is exiting but not yet reaped breaks the pipe: a restart, not a crash."""
    with fake("hangup-once", tmp_path / "hung") as eng:
        assert eng.analyze([query("a", [], [0])])[("a", 0)]["rootInfo"]["scoreLead"] == 0.0
        assert eng.alive()  # it lingers with its input closed
        eng.clear_cache()  # the clear_cache write breaks the pipe
        assert eng.restarts == 1
        assert sorted(t for _, t in eng.analyze([query("b", [], [1, 2])])) == [1, 2]
    with fake("hangup-once", tmp_path / "hung2") as eng:
        assert eng.analyze([query("a", [], [0])])[("a", 0)]["rootInfo"]["scoreLead"] == 0.0
        res = eng.analyze([query("b", [], [1, 2])])  # the query's write breaks the pipe
        assert eng.restarts == 1 and sorted(t for _, t in res) == [1, 2]


def test_pool_restarts_a_dead_engine(tmp_path):
    with EnginePool(lambda i: fake("die-once", tmp_path / "died"), 1) as pool:
        res = pool.analyze([query("a", [], [0, 1, 2])])
    assert pool.restarts == 1 and sorted(t for _, t in res) == [0, 1, 2]


def test_a_process_found_dead_before_the_next_call_counts_as_a_restart(tmp_path):
    """The death seen by poll() (not by the end of its output) is a restart too: the race of a loaded machine."""
    with fake("die-once", tmp_path / "died") as eng:
        assert eng.analyze([query("a", [], [0])])[("a", 0)]["rootInfo"]["scoreLead"] == 0.0
        eng.proc.wait(timeout=300)  # it has exited (at once) before the next call
        eng.clear_cache()
        assert eng.restarts == 1 and eng.alive()
        assert sorted(t for _, t in eng.analyze([query("b", [], [1, 2])])) == [1, 2]
