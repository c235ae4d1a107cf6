"""The page's speed and memory, and its screenshots, as a player meets it.

    python bench/serve.py speed --arrangements data/arrangements/pro/20m.jsonl --games 5 --work /tmp/serve
    python bench/serve.py shots --arrangements data/arrangements/pro/20m.jsonl --results results --out docs/figures

``speed`` (with ``--precision``, both sides' arithmetic: auto, float32, bfloat16) writes each of the first
``--games`` arrangements as an SGF of setup stones and, one position at a time on the same machine:
``moveorder infer POSITION -o OUT`` in a process of its own (start, imports, network load, search,
answer), then the same position asked twice of one ``moveorder serve`` (through its API, as the page
asks: the request, the queue, the search, the answer polled every 50 ms). It prints each one's wall time
and the ratios to the whole command: of a position new to the server (every position but the first, whose
answer also loads the network) and of the same position asked again (the network's outputs kept from
its first search); and the server's resident memory (VmRSS, VmHWM from /proc) idle after start, idle
after the answers, and at its peak while searching.

``shots`` opens the page in Debian's chromium (headless, as the tests drive it), orders the first
arrangement as a game record and takes a screenshot of the answer, then of the run view of ``--results``
with its first run's worst-ranked arrangement open; the PNGs go to ``--out``.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from moveorder.data.arrangements import load_arrangements

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from helpers import chromium, start_server  # noqa: E402  (one home for the browser's and the server's start)

MOVEORDER = [sys.executable, "-m", "moveorder"]


def position_sgf(x) -> str:
    black, white = x.actual[0::2], x.actual[1::2]
    return f"(;GM[1]FF[4]SZ[19]KM[{x.komi or 7.5}]AB{''.join(f'[{m}]' for m in black)}AW{''.join(f'[{m}]' for m in white)})"


def record_sgf(x) -> str:
    return (
        f"(;GM[1]FF[4]SZ[19]KM[{x.komi or 7.5}]" + "".join(f";{'BW'[k % 2]}[{m}]" for k, m in enumerate(x.actual)) + ")"
    )


def call(address: str, method: str, path: str, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        address + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


def ask(address: str, sgf: str) -> dict:
    job = call(address, "POST", "api/jobs", {"sgf": sgf, "name": "position.sgf"})["job"]
    while True:
        status = call(address, "GET", f"api/jobs/{job}")
        if status["state"] not in ("queued", "running"):
            return status
        time.sleep(0.05)


def memory(pid: int) -> dict:
    """VmRSS and VmHWM (peak) of ``pid``, MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def speed(a):
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    arrangements = load_arrangements(a.arrangements)[: a.games]
    proc, address = start_server("--precision", a.precision, cwd=work)
    try:
        time.sleep(1.0)
        start_mem = memory(proc.pid)
        peak_rss = [0.0]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak_rss[0] = max(peak_rss[0], memory(proc.pid)["VmRSS"])
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        rows = []
        for k, x in enumerate(arrangements):
            pos = work / f"{k}.sgf"
            pos.write_text(position_sgf(x))
            t0 = time.perf_counter()
            command = MOVEORDER + ["infer", str(pos), "-o", str(work / f"{k}-out.sgf"), "--quiet"]
            command += ["--precision", a.precision]
            subprocess.run(command, check=True, capture_output=True)
            whole = time.perf_counter() - t0
            pages = []
            for _ in range(2):
                t0 = time.perf_counter()
                status = ask(address, pos.read_text())
                pages.append(time.perf_counter() - t0)
                assert status["state"] == "done", status
            rows.append((whole, *pages, status["answer"]["seconds"]))
            print(
                f"{x.id}: moveorder infer {whole:.2f} s; page first {pages[0]:.2f} s, second {pages[1]:.2f} s "
                f"(search and answer {status['answer']['seconds']:.2f} s)"
            )
        stop.set()
        sampler.join()
        time.sleep(0.5)
        end_mem = memory(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    new = [r[1] / r[0] for r in rows[1:]]  # a position new to the server, the network loaded by an earlier one
    again = [r[2] / r[0] for r in rows]  # the same position asked again: the network's outputs kept
    print(
        f"{len(rows)} positions of {arrangements[0].n} stones: moveorder infer median "
        f"{statistics.median(r[0] for r in rows):.2f} s; the page, a position new to it (the network loaded "
        f"by the one before): median {statistics.median(r[1] for r in rows[1:]):.2f} s, ratio median "
        f"{statistics.median(new):.3f} (max {max(new):.3f}); the same position asked again: median "
        f"{statistics.median(r[2] for r in rows):.2f} s, ratio median {statistics.median(again):.3f} "
        f"(max {max(again):.3f})"
    )
    print(
        f"server memory: idle after start {start_mem['VmRSS']:.0f} MB; searching, peak {peak_rss[0]:.0f} MB "
        f"(VmHWM {end_mem['VmHWM']:.0f} MB); idle after the answers {end_mem['VmRSS']:.0f} MB"
    )


def shots(a):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    x = load_arrangements(a.arrangements)[a.index]
    work = Path(tempfile.mkdtemp(prefix="moveorder-shots-"))
    game = work / f"{x.id}.sgf"
    game.write_text(record_sgf(x))
    options = ["--results", str(Path(a.results).resolve())] if a.results else []
    proc, address = start_server(*options, cwd=work)
    driver = chromium(a.width, a.height)
    try:
        driver.get(address)
        time.sleep(1)
        driver.find_element(By.ID, "file").send_keys(str(game))
        start = time.monotonic()
        # the server has read the record: its stones counted (the empty board counts "0 black")
        while not re.match(r"[1-9]\d* black", driver.find_element(By.ID, "counts").text):
            if time.monotonic() - start > 60:
                raise SystemExit("the record was not loaded in 60 s")
            time.sleep(0.2)
        driver.find_element(By.ID, "ask").click()
        start = time.monotonic()
        while driver.find_element(By.ID, "answer").get_attribute("hidden") is not None:
            if time.monotonic() - start > 300:
                raise SystemExit("no answer in 300 s")
            time.sleep(0.2)
        time.sleep(0.5)
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
        driver.save_screenshot(str(out / "page-position.png"))
        print(out / "page-position.png")
        if a.results:
            driver.find_element(By.ID, "tab-run").click()
            time.sleep(1.5)
            header = driver.find_element(By.CSS_SELECTOR, "#run-table th[data-key=matching_prefix]")
            header.click()
            time.sleep(0.3)
            driver.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")[0].click()
            time.sleep(1.0)
            driver.save_screenshot(str(out / "page-run.png"))
            print(out / "page-run.png")
    finally:
        driver.quit()
        proc.terminate()
        proc.wait(timeout=30)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="verb", required=True)
    s = sub.add_parser("speed", help="the page's second answer against moveorder infer, and the server's memory")
    s.add_argument("--arrangements", required=True)
    s.add_argument("--games", type=int, default=5)
    s.add_argument("--precision", default="auto", help="both sides' arithmetic (moveorder infer's --precision)")
    s.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "moveorder-bench-serve"))
    h = sub.add_parser("shots", help="screenshots of both views in chromium")
    h.add_argument("--arrangements", required=True)
    h.add_argument("--index", type=int, default=0, help="the arrangement ordered on the page")
    h.add_argument("--results", default="", help="a results folder for the run view")
    h.add_argument("--out", default="docs/figures")
    h.add_argument("--width", type=int, default=1400)
    h.add_argument("--height", type=int, default=1000)
    a = p.parse_args()
    {"speed": speed, "shots": shots}[a.verb](a)


if __name__ == "__main__":
    main()
