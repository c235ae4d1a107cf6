"""The page of ``moveorder serve`` in a real browser (Debian's chromium, driven by selenium): a position
loaded and answered, each stone's number read from the page and compared with ``moveorder infer``'s order
for the same position; stepping with the keys; stones placed by clicking; a broken SGF's refusal; a
search cancelled; a results folder's run, its table and both boards stepping together. Run with
``pytest -m browser`` (scripts/test.sh does)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from helpers import OPENING, chromium, make_sgf, start_server
from moveorder.go import coords
from test_serve import ROWS, make_results

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("page")
    proc, address = start_server("--results", str(make_results(root)), cwd=root)
    yield address, root
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium(tmp_path_factory.mktemp("chromium"))
    yield driver
    driver.quit()


def page(browser, address, hash=""):
    browser.get(address + hash)
    wait_for(lambda: browser.find_element(By.ID, "quality").find_elements(By.TAG_NAME, "option"))
    return browser


def wait_for(condition, limit=90.0):
    start = time.monotonic()
    while time.monotonic() - start < limit:
        got = condition()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"not so after {limit} s")


def stones(browser, board="board-main"):
    """{vertex: number} as the page draws them: each stone's text, checked against its data."""
    out = {}
    for g in browser.find_elements(By.CSS_SELECTOR, f"#{board} g.stone"):
        number = g.find_element(By.TAG_NAME, "text").text
        assert number == g.get_attribute("data-number")
        out[g.get_attribute("data-point")] = int(number)
    return out


def cli_order(folder: Path, sgf_text: str, *options: str):
    """``moveorder infer`` of the same position in its own process: its order, GTP vertices."""
    (folder / "cli.sgf").write_text(sgf_text)
    done = subprocess.run(
        [sys.executable, "-m", "moveorder.cli", "infer", "cli.sgf", "--quiet", *options],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()[0].split()


def cli_answer(folder: Path, sgf_text: str):
    """``moveorder infer -o`` of the same position in its own process: its order (GTP vertices), the line
    saying how sure it is, and the move numbers the SGF marks in doubt (UC), read by sgfmill."""
    from sgfmill import sgf

    (folder / "cli.sgf").write_text(sgf_text)
    done = subprocess.run(
        [sys.executable, "-m", "moveorder.cli", "infer", "cli.sgf", "-o", "cli-out.sgf", "--quiet"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    game = sgf.Sgf_game.from_bytes((folder / "cli-out.sgf").read_bytes())
    doubt = [k for k, node in enumerate(game.get_main_sequence()[1:], start=1) if node.has_property("UC")]
    return lines[0].split(), lines[2], doubt


def answered(browser):
    wait_for(lambda: not browser.find_element(By.ID, "answer").get_attribute("hidden"))
    return stones(browser)


def test_a_loaded_game_is_ordered_as_the_command_line_orders_it(served, browser, tmp_path):
    address, _ = served
    page(browser, address)
    (tmp_path / "game.sgf").write_text(make_sgf(OPENING))
    browser.find_element(By.ID, "file").send_keys(str(tmp_path / "game.sgf"))
    wait_for(
        lambda: (
            "20 black" not in browser.find_element(By.ID, "counts").text
            and "10 black" in browser.find_element(By.ID, "counts").text
        )
    )
    browser.find_element(By.ID, "ask").click()
    drawn = answered(browser)
    expected, sure, doubt = cli_answer(tmp_path, make_sgf(OPENING))
    assert drawn == {v: k + 1 for k, v in enumerate(expected)}
    # how sure: the command line's line, and the stones its SGF marks in doubt drawn apart
    assert browser.find_element(By.ID, "confidence").text == sure[0].upper() + sure[1:] + "."
    marked = {
        g.get_attribute("data-point")
        for g in browser.find_elements(By.CSS_SELECTOR, "#board-main g.stone")
        if g.get_attribute("data-doubt") == "1"
    }
    assert marked == {v for v, k in drawn.items() if k in doubt}
    assert bool(doubt) == browser.find_element(By.ID, "doubt-legend").is_displayed()
    # the game's own order beside it, and the moves off the game's number ringed
    game = stones(browser, "board-game")
    assert game == {coords.to_gtp(coords.from_sgf(m)): k + 1 for k, m in enumerate(OPENING)}
    ringed = {
        g.get_attribute("data-point")
        for g in browser.find_elements(By.CSS_SELECTOR, "#board-main g.stone")
        if g.get_attribute("data-mismatch") == "1"
    }
    assert ringed == {v for v, k in drawn.items() if game[v] != k}
    assert "moves at the game's own move number" in browser.find_element(By.ID, "comparison").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#alternatives-table tbody tr")) == 5
    href = browser.find_element(By.ID, "download-sgf").get_attribute("href")
    assert urllib.request.urlopen(href).read().startswith(b"(;")


def test_the_keys_step_through_the_order(served, browser, tmp_path):
    address, _ = served
    page(browser, address)
    browser.find_element(By.ID, "paste-box").click()
    browser.find_element(By.ID, "paste").send_keys(make_sgf(OPENING[:12]))
    browser.find_element(By.ID, "load-paste").click()
    wait_for(lambda: "6 black and 6 white" in browser.find_element(By.ID, "counts").text)
    browser.find_element(By.ID, "ask").click()
    full = answered(browser)
    assert sorted(full.values()) == list(range(1, 13))
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_LEFT)
    assert browser.find_element(By.ID, "step-label").text == "move 11 of 12"
    assert stones(browser) == {v: k for v, k in full.items() if k <= 11}
    body.send_keys(Keys.HOME)
    assert stones(browser) == {} and browser.find_element(By.ID, "step-label").text == "move 0 of 12"
    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys(Keys.ARROW_RIGHT)
    assert stones(browser) == {v: k for v, k in full.items() if k <= 2}
    assert stones(browser, "board-game") == {
        coords.to_gtp(coords.from_sgf(m)): k + 1 for k, m in enumerate(OPENING[:2])
    }
    body.send_keys(Keys.END)
    assert stones(browser) == full


def click_point(browser, vertex: str):
    """Click the board's point ``vertex`` where the page draws it."""
    svg = browser.find_element(By.CSS_SELECTOR, "#board-main svg")
    row, col = coords.from_gtp(vertex)
    size = svg.size["width"]
    scale = size / (18 * 30 + 2 * 32)
    x, y = (32 + col * 30) * scale - size / 2, (32 + row * 30) * scale - svg.size["height"] / 2
    ActionChains(browser).move_to_element_with_offset(svg, round(x), round(y)).click().perform()


def test_stones_placed_by_clicking_are_ordered(served, browser, tmp_path):
    address, _ = served
    page(browser, address)
    browser.find_element(By.ID, "clear").click()
    browser.find_element(By.CSS_SELECTOR, "input[name=tool][value=alternate]").click()
    placed = ["Q16", "D4", "Q3", "D16", "R5"]
    for vertex in placed + ["K10", "K10"]:  # K10 placed, then removed
        click_point(browser, vertex)
    assert "3 black and 2 white" in browser.find_element(By.ID, "counts").text
    browser.find_element(By.ID, "ask").click()
    drawn = answered(browser)
    setup = "(;GM[1]FF[4]SZ[19]AB" + "".join(f"[{coords.to_sgf(coords.from_gtp(v))}]" for v in placed[::2])
    setup += "AW" + "".join(f"[{coords.to_sgf(coords.from_gtp(v))}]" for v in placed[1::2]) + ")"
    assert drawn == {v: k + 1 for k, v in enumerate(cli_order(tmp_path, setup))}
    colours = {
        g.get_attribute("data-point"): g.get_attribute("data-colour")
        for g in browser.find_elements(By.CSS_SELECTOR, "#board-main g.stone")
    }
    assert colours == {v: "BW"[k % 2] for k, v in enumerate(placed)}


def test_a_broken_sgf_is_refused_in_the_command_lines_words(served, browser, tmp_path):
    address, _ = served
    page(browser, address)
    browser.find_element(By.ID, "paste-box").click()
    browser.find_element(By.ID, "paste").clear()
    browser.find_element(By.ID, "paste").send_keys(make_sgf(["pd", "dd", "pd"]))
    browser.find_element(By.ID, "load-paste").click()
    error = wait_for(lambda: browser.find_element(By.ID, "error").text)
    (tmp_path / "pasted.sgf").write_text(make_sgf(["pd", "dd", "pd"]))
    done = subprocess.run(
        [sys.executable, "-m", "moveorder.cli", "infer", "pasted.sgf"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 2 and error in done.stderr
    assert error == "pasted.sgf: move 3 (Black Q16, B[pd]) is illegal: Q16 is occupied"
    assert json.load(urllib.request.urlopen(address + "api/info"))["version"]


def test_a_search_is_cancelled_from_the_page(served, browser):
    address, _ = served
    page(browser, address)
    browser.find_element(By.ID, "paste-box").click()
    browser.find_element(By.ID, "paste").clear()
    browser.find_element(By.ID, "paste").send_keys(make_sgf(OPENING))
    browser.find_element(By.ID, "load-paste").click()
    wait_for(lambda: "10 black" in browser.find_element(By.ID, "counts").text)
    browser.find_element(By.CSS_SELECTOR, "#quality option[value=paper]").click()
    browser.find_element(By.ID, "ask").click()
    wait_for(lambda: "searching" in browser.find_element(By.ID, "status").text)
    browser.find_element(By.ID, "cancel").click()
    assert browser.find_element(By.ID, "status").text == "cancelled"
    jobs = [
        json.load(urllib.request.urlopen(f"{address}api/jobs/{k}"))
        for k in range(1, 10)
        if _exists(f"{address}api/jobs/{k}")
    ]
    assert wait_for(
        lambda: json.load(urllib.request.urlopen(f"{address}api/jobs/{jobs[-1]['job']}"))["state"] == "cancelled", 10
    )


def _exists(url):
    try:
        urllib.request.urlopen(url)
        return True
    except OSError:
        return False


def test_a_run_shows_its_table_and_both_orders(served, browser):
    address, _ = served
    page(browser, address)
    browser.find_element(By.ID, "tab-run").click()
    rows = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr"))
    cells = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")] for tr in rows]
    assert [c[0] for c in cells] == ["g1", "g2"]
    assert [c[5] for c in cells] == ["yes", "no"] and [c[10] for c in cells] == ["0.500", "1.250"]
    assert [c[6] for c in cells] == ["62%", ""]  # the chance the answer stated, where it stated one
    assert "(the answers stated 62% on average)" in browser.find_element(By.ID, "run-info").text
    browser.find_element(By.CSS_SELECTOR, "#run-table th[data-key=loss_inferred]").click()
    browser.find_element(By.CSS_SELECTOR, "#run-table th[data-key=loss_inferred]").click()  # descending
    assert [tr.get_attribute("data-id") for tr in browser.find_elements(By.CSS_SELECTOR, "#run-table tbody tr")] == [
        "g2",
        "g1",
    ]
    browser.find_element(By.CSS_SELECTOR, "#run-table tbody tr[data-id=g2]").click()
    wait_for(lambda: stones(browser, "board-run-inferred"))
    row = ROWS[1]
    for board, order in (("board-run-actual", row["actual"]), ("board-run-inferred", row["inferred"])):
        assert stones(browser, board) == {coords.to_gtp(coords.from_sgf(m)): k + 1 for k, m in enumerate(order)}
    body = browser.find_element(By.TAG_NAME, "body")
    for _ in range(17):
        body.send_keys(Keys.ARROW_LEFT)
    assert browser.find_element(By.ID, "run-step-label").text == "move 3 of 20"
    for board, order in (("board-run-actual", row["actual"]), ("board-run-inferred", row["inferred"])):
        assert stones(browser, board) == {coords.to_gtp(coords.from_sgf(m)): k + 1 for k, m in enumerate(order[:3])}


def test_a_dropped_record_is_clipped_at_the_move_asked(served, browser):
    """An SGF dropped on the board (a drop event carrying the file, as a desktop's file manager sends it),
    then the move number to clip at: the position shown is the record's after that move."""
    address, _ = served
    page(browser, address)
    browser.execute_script(
        """
        const data = new DataTransfer();
        data.items.add(new File([arguments[0]], "dropped.sgf", {type: "application/x-go-sgf"}));
        const board = document.getElementById("board-main");
        board.dispatchEvent(new DragEvent("drop", {dataTransfer: data, bubbles: true, cancelable: true}));
        """,
        make_sgf(OPENING),
    )
    wait_for(lambda: "10 black and 10 white" in browser.find_element(By.ID, "counts").text)
    assert browser.find_element(By.ID, "caption-main").text == "dropped.sgf: the position after move 20"
    moves = browser.find_element(By.ID, "moves")
    moves.clear()
    moves.send_keys("7", Keys.ENTER)
    wait_for(lambda: "4 black and 3 white" in browser.find_element(By.ID, "counts").text)
    shown = {g.get_attribute("data-point") for g in browser.find_elements(By.CSS_SELECTOR, "#board-main g.stone")}
    assert shown == {coords.to_gtp(coords.from_sgf(m)) for m in OPENING[:7]}
    browser.find_element(By.ID, "ask").click()
    drawn = answered(browser)
    assert sorted(drawn.values()) == list(range(1, 8)) and set(drawn) == shown
    assert stones(browser, "board-game") == {
        coords.to_gtp(coords.from_sgf(m)): k + 1 for k, m in enumerate(OPENING[:7])
    }
