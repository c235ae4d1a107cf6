"""moveorder serve's API through FastAPI's test client: the answer is the command line's for the same
position and settings (its order, likelihood, alternatives and printed lines, its SGF replayed by sgfmill);
a refusal is the command line's, word for word; the server serves on after any bad request; searches wait
their turn, stop when cancelled or left; only the runs of the results folder can be read."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from sgfmill import sgf

from helpers import OPENING, filler_moves, make_sgf
from moveorder import cli
from moveorder import settings as S
from moveorder.cli.search import infer_request
from moveorder.go import coords
from moveorder.nets import shipped
from moveorder.serve.app import create_app

OPENING_SGF = make_sgf(OPENING)
OPENING_GTP = [coords.to_gtp(coords.from_sgf(m)) for m in OPENING]


def make_client(results=None) -> TestClient:
    app = create_app(infer_request, shipped.names(), S.SHIPPED_NETWORK, results)
    return TestClient(app, base_url="http://127.0.0.1")


@pytest.fixture(scope="module")
def client():
    with make_client() as c:
        yield c


def wait(client, job: str, limit: float = 120.0) -> dict:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        status = client.get(f"/api/jobs/{job}").json()
        if status["state"] not in ("queued", "running"):
            return status
        time.sleep(0.05)
    raise AssertionError(f"search {job} still {status['state']} after {limit} s")


def ask(client, sgf_text=OPENING_SGF, name="opening.sgf", **options) -> dict:
    response = client.post("/api/jobs", json={"sgf": sgf_text, "name": name, **options})
    assert response.status_code == 202, response.text
    return wait(client, response.json()["job"])


def cli_answer(tmp_path: Path, sgf_text: str, *options: str):
    """``moveorder infer`` in its own process: its printed lines and its SGF."""
    pos, out = tmp_path / "opening.sgf", tmp_path / "cli.sgf"
    pos.write_text(sgf_text)
    done = subprocess.run(
        [sys.executable, "-m", "moveorder.cli", "infer", "opening.sgf", "-o", "cli.sgf", "--quiet", *options],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines(), out.read_bytes()


def sgf_lines(data: bytes):
    """Every line of play of an SGF game record (the main line first), as SGF points, read by sgfmill."""
    game = sgf.Sgf_game.from_bytes(data)
    lines = []

    def walk(node, moves):
        children = list(node)
        if not children:
            lines.append(moves)
        for child in children:
            colour, move = child.get_move()
            walk(child, moves + [coords.to_sgf((18 - move[0], move[1]))])

    walk(game.get_root(), [])
    return lines, game.get_root().get("KM")


def test_the_page_answers_as_the_command_line_does(client, tmp_path):
    """The default search from both: the same order, the same LGM, alternatives and comparison printed
    alike (only the SGF's name differs), and SGF files with the same lines of play."""
    status = ask(client, alternatives=3)
    assert status["state"] == "done", status
    answer = status["answer"]
    lines, cli_sgf = cli_answer(tmp_path, OPENING_SGF, "--alternatives", "3")
    assert lines[0].split() == answer["order"]
    assert lines[1] == "LGM {:.4f}  ->  cli.sgf".format(answer["lgm"])
    assert answer["lines"][1] == "LGM {:.4f}  ->  opening-ordered.sgf".format(answer["lgm"])
    assert answer["lines"][2:] == lines[2:]
    assert len(answer["orders"]) == 3
    page_sgf = client.get(f"/api/jobs/{status['job']}/sgf")
    assert page_sgf.status_code == 200
    assert 'filename="opening-ordered.sgf"' in page_sgf.headers["content-disposition"]
    assert sgf_lines(page_sgf.content) == sgf_lines(cli_sgf)
    # the numbers drawn: each stone's number is its move in the order (independently: the GTP order)
    figure = answer["orders"][0]["figure"]
    assert {s["point"]: s["number"] for s in figure["stones"]} == {v: k + 1 for k, v in enumerate(answer["order"])}
    # the game's own order, compared as the command line compares it
    assert answer["actual"]["moves"] == 20
    assert [s["point"] for s in sorted(answer["actual"]["stones"], key=lambda s: s["number"])] == OPENING_GTP


def test_a_position_asked_again_is_answered_alike_from_the_kept_cache():
    """The network's outputs are kept from one search to the next: a position asked again, with another
    searched between, gets the same answer to the last bit, with a fraction of the network's work."""
    with make_client() as c:
        first = ask(c, alternatives=4)
        other = ask(c, make_sgf(filler_moves(24)), alternatives=4)
        again = ask(c, alternatives=4)
        assert first["state"] == other["state"] == again["state"] == "done"
        assert again["answer"]["orders"] == first["answer"]["orders"]
        assert again["answer"]["lines"] == first["answer"]["lines"]
        jobs = c.app.state.worker.jobs
        assert (
            jobs[first["job"]].evaluations > 300
            and jobs[again["job"]].evaluations < jobs[first["job"]].evaluations / 10
        )


def test_the_diagram_files_are_the_command_lines(client, tmp_path):
    """SVG and PNG as ``moveorder infer --diagram`` draws them: the same figure, every stone's number in it."""
    status = ask(client, name="game one.sgf")
    job = status["job"]
    svg = client.get(f"/api/jobs/{job}/svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    png = client.get(f"/api/jobs/{job}/png")
    assert png.content[:8] == b"\x89PNG\r\n\x1a\n"
    pos = tmp_path / "game one.sgf"
    pos.write_text(OPENING_SGF)
    assert cli.main(["infer", str(pos), "--diagram", str(tmp_path / "cli.svg"), "--quiet"]) == 0
    drawn = (tmp_path / "cli.svg").read_text()
    for vertex in status["answer"]["order"]:
        assert f'id="number-{vertex}"' in svg.text and f'id="number-{vertex}"' in drawn
    strip = [line for line in svg.text.splitlines() if "<dc:date>" not in line]
    assert strip == [line for line in drawn.splitlines() if "<dc:date>" not in line]
    assert client.get(f"/api/jobs/{job}/pdf").status_code == 404


def cli_refusal(tmp_path, monkeypatch, caplog, capsys, sgf_text: str, name: str, *options: str) -> str:
    """What ``moveorder infer NAME OPTIONS`` says of the input, run in the file's folder (its name as given)."""
    (tmp_path / name).write_bytes(sgf_text.encode())
    monkeypatch.chdir(tmp_path)
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="moveorder"):
        try:
            code = cli.main(["infer", name, "--quiet", *options])
        except SystemExit as exit:  # argparse's refusals
            code = exit.code
            return capsys.readouterr().err.strip().splitlines()[-1].split("error: ", 1)[1]
    assert code == 2
    return [r.getMessage() for r in caplog.records if r.levelname == "ERROR"][-1]


BAD = [
    ("illegal.sgf", make_sgf(["pd", "pd"]), {}, []),
    ("handicap.sgf", "(;GM[1]FF[4]SZ[19]HA[2]AB[dp][pd];W[dd])", {}, []),
    ("both.sgf", "(;GM[1]FF[4]SZ[19]AB[dp]AW[pd];B[dd])", {}, []),
    ("nine.sgf", "(;GM[1]FF[4]SZ[9];B[cc])", {}, []),
    ("short.sgf", OPENING_SGF, {"moves": 30}, ["--moves", "30"]),
    ("opening.sgf", OPENING_SGF, {"moves": 0}, ["--moves", "0"]),
    ("record.sgf", OPENING_SGF, {"prisoners": [1, 0]}, ["--prisoners", "1", "0"]),
    ("setup.sgf", "(;GM[1]SZ[19]AB[dd]AW[pp])", {"prisoners": [500, 0]}, ["--prisoners", "500", "0"]),
    ("setup.sgf", "(;GM[1]SZ[19]AB[dd]AW[pp])", {"prisoners": [-1, 0]}, ["--prisoners", "-1", "0"]),
    ("opening.sgf", OPENING_SGF, {"alternatives": 0}, ["--alternatives", "0"]),
    ("opening.sgf", OPENING_SGF, {"alternatives": 101}, ["--alternatives", "101"]),
    ("opening.sgf", OPENING_SGF, {"quality": "best"}, ["--quality", "best"]),
    ("empty.sgf", "(;GM[1]SZ[19])", {}, []),
    ("broken.sgf", "(;GM[1]SZ[19];B[pd", {}, []),
    ("noplay.sgf", "no game here", {}, []),
    ("suicide.sgf", "(;GM[1]SZ[19]AB[ab][ba]AW[aa])", {}, []),
    ("big.sgf", "(;GM[1]SZ[19]C[" + "x" * S.MAX_SGF_BYTES + "];B[pd])", {}, []),
]


@pytest.mark.parametrize("name, text, body, options", BAD, ids=[f"{b[0]}-{'-'.join(b[3]) or 'file'}" for b in BAD])
def test_a_refusal_reads_as_the_command_lines(client, tmp_path, monkeypatch, caplog, capsys, name, text, body, options):
    """The same bad input, the same words: an HTTP 400, and the server serves on. The command line names
    the file as it was given; the page names it by its file name."""
    expected = cli_refusal(tmp_path, monkeypatch, caplog, capsys, text, name, *options)
    response = client.post("/api/jobs", json={"sgf": text, "name": name, **body})
    assert response.status_code == 400, response.text
    assert response.json()["error"] == expected
    if not options:  # loading the position refuses the same
        shown = client.post("/api/position", json={"sgf": text, "name": name})
        assert shown.status_code == 400 and shown.json()["error"] == expected
    assert client.get("/api/info").status_code == 200


def test_loading_a_position_refuses_it_as_asking_does(client, tmp_path, monkeypatch, caplog, capsys):
    """Setup stones with prisoners and a group without liberties: loading them names the prisoners given,
    as the command line (and asking) does."""
    text = "(;GM[1]SZ[19]AB[ab][ba]AW[aa])"
    expected = cli_refusal(tmp_path, monkeypatch, caplog, capsys, text, "s.sgf", "--prisoners", "1", "0")
    assert expected.endswith("(with --prisoners 1 0)")
    for path in ("/api/position", "/api/jobs"):
        response = client.post(path, json={"sgf": text, "name": "s.sgf", "prisoners": [1, 0]})
        assert response.status_code == 400 and response.json()["error"] == expected


def test_the_sgf_size_limit_is_the_command_lines(tmp_path, monkeypatch, caplog, capsys):
    text = "(;GM[1]SZ[19]C[" + "x" * (S.MAX_SGF_BYTES - 40) + "];B[pd]" + ";W[dd]" * 4 + ")"
    assert len(text.encode()) > S.MAX_SGF_BYTES
    expected = cli_refusal(tmp_path, monkeypatch, caplog, capsys, text, "long.sgf")
    assert expected.startswith(f"long.sgf: {len(text.encode()):,} bytes: the one-position tool reads an SGF of at most")
    with make_client() as c:
        response = c.post("/api/position", json={"sgf": text, "name": "long.sgf"})
        assert response.status_code == 400 and response.json()["error"] == expected


def test_bad_requests_are_4xx_and_the_server_serves_on(client):
    cases = [
        client.post("/api/jobs", content=b"{not json", headers={"Content-Type": "application/json"}),
        client.post("/api/jobs", json={"name": "x.sgf"}),  # no sgf
        client.post("/api/jobs", json={"sgf": OPENING_SGF, "alternatives": "many"}),
        client.post("/api/jobs", json={"sgf": OPENING_SGF, "prisoners": [1]}),
        client.post("/api/jobs", json={"sgf": OPENING_SGF, "extra": 1}),
        client.post("/api/jobs", json={"sgf": OPENING_SGF, "network": "/etc/passwd"}),
        client.post("/api/jobs", json={"sgf": OPENING_SGF, "komi": "lots"}),
        client.post(
            "/api/jobs", content=b"x" * (S.SERVE_MAX_REQUEST + 1), headers={"Content-Type": "application/json"}
        ),
        client.get("/api/jobs/999999"),
        client.delete("/api/jobs/nope"),
        client.get("/static/../pyproject.toml"),
        client.get("/static/secret.txt"),
        client.get("/api/runs"),  # no results folder given
        client.post(
            "/api/position", content=b'{"sgf": "(;AB[\\ud800])"}', headers={"Content-Type": "application/json"}
        ),
        client.post(
            "/api/jobs",
            content=json.dumps({"sgf": OPENING_SGF, "komi": float("nan")}).encode(),
            headers={"Content-Type": "application/json"},
        ),
    ]
    codes = [r.status_code for r in cases]
    assert all(400 <= c < 500 for c in codes), codes
    assert codes[7] == 413
    assert cases[-2].json()["error"].startswith("sgf: not text: surrogates not allowed")
    assert cases[-1].json()["error"].startswith("komi nan: expected a number of points")
    assert "network" in cases[5].json()["error"] and "tygem" in cases[5].json()["error"]
    assert client.get("/").status_code == 200
    assert ask(client, network="tygem")["state"] == "done"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
FIELDS = ("sgf", "name", "moves", "prisoners", "komi", "quality", "network", "alternatives")


@settings(max_examples=150, deadline=None)
@given(body=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6) | JSON)
def test_no_request_body_is_answered_with_a_server_error(client, body):
    """Whatever JSON comes (mostly not a position), the answer is a refusal or a queued search, never a 5xx."""
    for path in ("/api/position", "/api/jobs"):
        response = client.post(path, json=body)
        assert response.status_code in (200, 202, 400, 404, 413, 503), (path, body, response.text)
        if response.status_code == 202:
            client.delete(f"/api/jobs/{response.json()['job']}")
        assert "error" in response.json() or response.status_code in (200, 202)


def test_another_sites_page_cannot_use_the_server(client):
    """A Host header other than this machine's is refused (a page elsewhere cannot reach it by DNS tricks)."""
    assert client.get("/api/info", headers={"Host": "evil.example:8321"}).status_code == 400
    assert client.get("/api/info", headers={"Host": "localhost:8321"}).status_code == 200


def test_the_komi_and_prisoners_fields(client):
    """Stones placed with prisoners and komi: the capture search orders them, the SGF keeps the komi, and
    its main line replays on sgfmill's board to exactly the stones placed, Black having taken one."""
    from sgfmill import boards

    stones = "(;GM[1]FF[4]SZ[19]AB[ab][ba][pd]AW[dd][qq])"  # Black took one stone, at A19 it must have been
    status = ask(client, stones, name="board.sgf", prisoners=[1, 0], komi=6.5, network="tygem")
    assert status["state"] == "done", status
    (main, *_), komi = sgf_lines(client.get(f"/api/jobs/{status['job']}/sgf").content)
    assert komi == 6.5 and len(main) == 6
    board, taken = boards.Board(19), [0, 0]
    for k, m in enumerate(main):
        before = len(board.list_occupied_points())
        board.play(*coords.to_sgfmill(coords.from_sgf(m)), "bw"[k % 2])
        taken[k % 2] += before + 1 - len(board.list_occupied_points())
    setup = sgf.Sgf_game.from_string(stones).get_root().get_setup_stones()
    assert set(board.list_occupied_points()) == {("b", p) for p in setup[0]} | {("w", p) for p in setup[1]}
    assert taken == [1, 0]


def test_searches_wait_their_turn_and_stop_when_cancelled(client):
    """One search at a time: a second waits with its place; a cancelled beam (which reports no progress
    until its end) stops within a network call, and the next one runs."""
    long = make_sgf(filler_moves(60))
    slow = client.post("/api/jobs", json={"sgf": long, "quality": "good"}).json()
    queued = client.post("/api/jobs", json={"sgf": OPENING_SGF, "network": "tygem"}).json()
    assert slow["place"] == 0 and queued["place"] == 1
    deadline = time.monotonic() + 60
    running = {}
    while time.monotonic() < deadline:
        running = client.get(f"/api/jobs/{slow['job']}").json()
        if running["state"] == "running" and running["fraction"] > 0:
            break
        time.sleep(0.05)
    assert running["state"] == "running" and 0 < running["fraction"] < 1, running
    assert client.get(f"/api/jobs/{queued['job']}").json() | {"fraction": 0} == {
        "job": queued["job"],
        "state": "queued",
        "place": 1,
        "fraction": 0,
    }
    stop = time.monotonic()
    assert client.delete(f"/api/jobs/{slow['job']}").status_code == 200
    assert wait(client, slow["job"], 10)["state"] == "cancelled"
    assert time.monotonic() - stop < 5
    assert wait(client, queued["job"])["state"] == "done"
    assert client.get(f"/api/jobs/{slow['job']}/sgf").status_code == 409


def test_a_search_nobody_asks_about_is_stopped(monkeypatch):
    """The page that asked is gone (no one asks for the search's state): the search stops by itself."""
    monkeypatch.setattr(S, "SERVE_ABANDONED", 1.0)
    with make_client() as c:
        job = c.post("/api/jobs", json={"sgf": OPENING_SGF, "quality": "paper", "network": "tygem"}).json()["job"]
        worker = c.app.state.worker
        deadline = time.monotonic() + 20
        while worker.jobs[job].state in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert worker.jobs[job].state == "cancelled" and "nobody asked" in worker.jobs[job].error


# --- the results folder -------------------------------------------------------------------------------------

ROWS = [
    {"id": "g1", "set": "pro", "n": 20, "inferred": OPENING, "actual": OPENING, "lgm": 0.31, "actual_lgm": 0.31}
    | {"exact_match": True, "matching_prefix": 20, "matching_moves": 20, "source": "a.sgf", "trial_lgms": [0.31]}
    | {"chance": 0.624},  # g2 states none (an answer of a network without a calibration)
    {"id": "g2", "set": "pro", "n": 20, "inferred": OPENING[2:4] + OPENING[:2] + OPENING[4:], "actual": OPENING}
    | {"lgm": 0.33, "actual_lgm": 0.30, "exact_match": False, "matching_prefix": 0, "matching_moves": 16}
    | {"source": "b.sgf", "trial_lgms": [0.33]},
]


def make_results(root: Path) -> Path:
    """A small results folder laid out as the workflow lays it out: one run, scored."""
    run = root / "results" / "inferred" / "tygem-6x128" / "beam-w32" / "pro"
    run.mkdir(parents=True)
    (run / "20m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    scored = root / "results" / "scored" / "tygem-6x128" / "beam-w32" / "g170-b6c96-v100" / "pro"
    scored.mkdir(parents=True)
    (scored / "20m.csv").write_text(
        "set,n,id,lgm,loss_actual,loss_inferred\npro,20,g1,0.31,0.5,0.5\npro,20,g2,0.33,0.4,1.25\n"
    )
    return root / "results"


def test_a_run_is_read_from_the_files_the_pipeline_wrote(tmp_path):
    with make_client(make_results(tmp_path)) as c:
        runs = c.get("/api/runs").json()["runs"]
        assert runs == [
            {"run": "inferred/tygem-6x128/beam-w32/pro/20m.jsonl", "network": "tygem-6x128", "label": "beam-w32"}
            | {"set": "pro", "n": 20}
        ]
        table = c.get("/api/runs/table", params={"run": runs[0]["run"]}).json()
        assert table["scored_by"] == "g170-b6c96-v100"
        got = {
            r["id"]: (r["exact_match"], r["matching_prefix"], r["loss_actual"], r["loss_inferred"])
            for r in table["rows"]
        }
        assert got == {"g1": (True, 20, 0.5, 0.5), "g2": (False, 0, 0.4, 1.25)}
        assert {r["id"]: r["chance"] for r in table["rows"]} == {"g1": 0.624, "g2": None}
        boards = c.get("/api/runs/boards", params={"run": runs[0]["run"], "id": "g2"}).json()
        inferred = {s["point"]: (s["number"], s["mismatch"]) for s in boards["inferred"]["stones"]}
        assert inferred["C16"] == (1, True) and inferred["Q4"] == (4, True) and inferred["R15"] == (5, False)
        assert sum(m for _, m in inferred.values()) == 4


TRICKS = [
    "../secret.jsonl",
    "/etc/passwd",
    "inferred/../../secret.jsonl",
    "inferred/a/b/../../../../secret.jsonl",
    "inferred/tygem-6x128/beam-w32/pro/../../../../../secret.jsonl",
    "inferred/tygem-6x128/beam-w32/out/20m.jsonl",  # a link out of the folder
    "inferred\\..\\..\\secret.jsonl",
    "inferred/%2e%2e/%2e%2e/secret.jsonl",
    "scored/tygem-6x128/beam-w32/g170-b6c96-v100/pro/20m.csv",
    "",
]


@pytest.mark.parametrize("trick", TRICKS)
def test_no_file_outside_the_runs_of_the_folder_is_read(tmp_path, trick):
    results = make_results(tmp_path)
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps(ROWS[0] | {"id": "SECRET"}) + "\n")
    (results / "inferred" / "tygem-6x128" / "beam-w32" / "out").mkdir()
    os.symlink(secret, results / "inferred" / "tygem-6x128" / "beam-w32" / "out" / "20m.jsonl")
    with make_client(results) as c:
        assert [r["run"] for r in c.get("/api/runs").json()["runs"]] == ["inferred/tygem-6x128/beam-w32/pro/20m.jsonl"]
        for path in ("/api/runs/table", "/api/runs/boards"):
            response = c.get(path, params={"run": trick, "id": "SECRET"})
            assert response.status_code == 404 and "SECRET" not in response.text, (trick, response.text)
        raw = c.get(f"/api/runs/table?run={trick}")
        assert raw.status_code == 404 and "SECRET" not in raw.text
