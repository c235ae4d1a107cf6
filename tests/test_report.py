"""The summary and paper comparison, and every figure and table of a report."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from helpers import REPO, fake_tables
from moveorder import cli
from moveorder.report.metrics import better_both_ways, slope_through_origin, summarize
from moveorder.report.summary import (
    COMPARED,
    build_summary,
    comparison_table,
    make_report,
    network_of,
    networks_line,
    plots,
    write_examples,
)


def test_summary_and_comparison():
    inferred, scored = fake_tables()
    row = summarize(inferred, scored)
    assert row["arrangements"] == 12 and row["exact_match_rate"] == pytest.approx(4 / 12)
    assert row["loss_slope"] == pytest.approx(slope_through_origin(scored["loss_actual"], scored["loss_inferred"]))
    paper = yaml.safe_load((REPO / "config/paper_results.yaml").read_text())
    comp = comparison_table(pd.DataFrame([{"set": "pro", "n": 20, **row}]), paper)
    assert comp.loc[0, "LGM slope (paper)"] == 1.023 and comp.loc[0, "paper set"] == "Pro20m"
    both = better_both_ways(scored)
    assert ((both["lgm"] > both["actual_lgm"]) & (both["loss_inferred"] < both["loss_actual"])).all()


def test_report_writes_every_figure_and_table(tmp_path):
    inferred, scored = fake_tables()
    inferred.to_csv(tmp_path / "i.csv", index=False)
    scored.to_csv(tmp_path / "s.csv", index=False)
    # Through the command line, as the workflow's rule runs it.
    args = ["report", "--entry", "pro", "6", str(tmp_path / "i.csv"), str(tmp_path / "s.csv")]
    args += ["--paper", str(REPO / "config/paper_results.yaml"), "--out-dir", str(tmp_path / "out")]
    args += ["--figures", str(tmp_path / "fig"), "--network", "test-net", "--dataset", "pro=Fox pro"]
    assert cli.main([*args, "--note", "note", "--examples", "1"]) == 0
    names = ("likelihood_all", "loss_all", "likelihood_pro_6m", "loss_pro_6m", "reliability", "reliability_moves")
    for name in (*names, "examples/example_1"):
        for ext in (".png", ".pdf"):
            f = tmp_path / "fig" / f"{name}{ext}"
            assert f.exists() and f.stat().st_size > 5000, f
    summary = pd.read_csv(tmp_path / "out/summary.csv")
    assert summary.loc[0, "network"] == "test-net" and summary.loc[0, "dataset"] == "Fox pro"
    # The paper's numbers, by hand from the two tables: slopes through the origin, shares, means.
    x, y = inferred["actual_lgm"], inferred["lgm"]
    la, li = scored["loss_actual"], scored["loss_inferred"]
    row = summary.loc[0]
    assert row["lgm_slope"] == pytest.approx((x * y).sum() / (x * x).sum(), rel=1e-12)
    assert row["share_on_or_above"] == pytest.approx((y >= x).sum() / 12, rel=1e-12)
    assert row["loss_slope"] == pytest.approx((la * li).sum() / (la * la).sum(), rel=1e-12)
    assert row["mean_loss_actual"] == pytest.approx(la.sum() / 12, rel=1e-12)
    assert row["share_loss_lower"] == pytest.approx((li < la).sum() / 12, rel=1e-12)
    assert row["exact_match_rate"] == pytest.approx(4 / 12) and row["arrangements"] == 12
    assert "LGM slope (paper)" in (tmp_path / "out/paper_comparison.md").read_text()


def test_report_names_each_sets_network_and_appends_cross_level(tmp_path, monkeypatch):
    titles = []
    real = plots.likelihood_scatter
    monkeypatch.setattr(
        plots, "likelihood_scatter", lambda panels, *a, **k: titles.append(list(panels)) or real(panels, *a, **k)
    )
    entries = []
    for s in ("pro", "kgs"):
        inferred, scored = fake_tables(seed=len(s))
        inferred.to_csv(tmp_path / f"{s}-i.csv", index=False)
        scored.to_csv(tmp_path / f"{s}-s.csv", index=False)
        entries.append((s, 6, tmp_path / f"{s}-i.csv", tmp_path / f"{s}-s.csv"))
    (tmp_path / "cross.md").write_text("## Networks across levels\n\n| a |\n|---|\n| 1 |\n")
    make_report(
        entries,
        REPO / "config/paper_results.yaml",
        tmp_path / "out",
        tmp_path / "fig",
        {"pro": "trained-pro", "kgs": "trained-kgs"},
        {},
        "note",
        cross_level=tmp_path / "cross.md",
    )
    summary = pd.read_csv(tmp_path / "out/summary.csv")
    assert dict(zip(summary["set"], summary["network"])) == {"pro": "trained-pro", "kgs": "trained-kgs"}
    text = (tmp_path / "out/summary.md").read_text()
    assert "\n\nnetworks: pro trained-pro, kgs trained-kgs; note\n\n|" in text
    assert text.endswith("|\n\n## Networks across levels\n\n| a |\n|---|\n| 1 |\n")
    comp = pd.read_csv(tmp_path / "out/paper_comparison.csv")
    assert list(comp["network"]) == ["trained-pro", "trained-kgs"]
    # Every likelihood panel is titled with its set, length and network.
    assert titles[-1] == ["pro6m, trained-pro", "kgs6m, trained-kgs"]


class Recorder:
    """Stands in for the figure functions of moveorder.report.plots (tested in test_plots.py): records each call."""

    def __init__(self, monkeypatch):
        self.calls = []
        for name in ("likelihood_scatter", "loss_scatter", "sequence_pair", "reliability_diagram", "save"):
            monkeypatch.setattr(plots, name, self.record(name))

    def record(self, name):
        def call(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            stem = args[1] if name != "sequence_pair" else args[2]
            return [Path(stem).with_suffix(".png")]

        return call

    def of(self, name):
        return [(args, kwargs) for n, args, kwargs in self.calls if n == name]


def two_sets(tmp_path, n=20):
    """(pro, kgs) inference and scoring tables at ``n`` moves, written as the workflow writes them."""
    entries, tables = [], {}
    for s, seed in (("pro", 3), ("kgs", 4)):
        inferred, scored = fake_tables(seed=seed)
        inferred["n"] = scored["n"] = n
        inferred.to_csv(tmp_path / f"{s}-i.csv", index=False)
        scored.to_csv(tmp_path / f"{s}-s.csv", index=False)
        entries.append((s, n, tmp_path / f"{s}-i.csv", tmp_path / f"{s}-s.csv"))
        tables[s] = (pd.read_csv(tmp_path / f"{s}-i.csv"), pd.read_csv(tmp_path / f"{s}-s.csv"))
    return entries, tables


def md_rows(text):
    """The cells of every markdown table row of ``text`` (separator rows left out)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def test_report_hands_each_figure_its_data_and_title(tmp_path, monkeypatch):
    rec = Recorder(monkeypatch)
    entries, tables = two_sets(tmp_path)
    networks = {"pro": "trained-pro", "kgs": "trained-kgs"}
    out = tmp_path / "a/b/out"  # folders made as deep as asked
    make_report(entries, REPO / "config/paper_results.yaml", out, tmp_path / "fig", networks, {}, "N", 2)
    assert (out / "summary.md").exists()
    fig = tmp_path / "fig"
    lik, loss = {}, {}
    for s in ("pro", "kgs"):
        inferred, scored = tables[s]
        title = f"{s}20m, trained-{s}"
        lik[title] = {"actual": list(inferred["actual_lgm"]), "inferred": list(inferred["lgm"])}
        loss[title] = {
            "loss_actual": list(scored["loss_actual"]),
            "loss_inferred": list(scored["loss_inferred"]),
            "ratio": list(scored["lgm_ratio"]),
        }
    # One figure a set and length, then every panel in one figure, each with the note.
    assert rec.of("likelihood_scatter") == [(({t: lik[t]}, fig / f"likelihood_{t[:3]}_20m", "N"), {}) for t in lik] + [
        ((lik, fig / "likelihood_all", "N"), {})
    ]
    assert rec.of("loss_scatter") == [(({t: loss[t]}, fig / f"loss_{t[:3]}_20m", "N"), {}) for t in loss] + [
        ((loss, fig / "loss_all", "N"), {})
    ]
    # The examples: better on both counts, the largest likelihood gains of all sets first, two of them.
    picks = []
    for s in ("pro", "kgs"):
        inferred, scored = tables[s]
        for _, r in scored.merge(inferred[["id", "inferred", "actual"]], on="id").iterrows():
            if r["lgm"] > r["actual_lgm"] and r["loss_inferred"] < r["loss_actual"]:
                picks.append((r["lgm"] / r["actual_lgm"], s, r))
    picks.sort(key=lambda p: -p[0])
    assert len(picks) > 2  # there is a choice to make
    expected = []
    for k, (_, s, r) in enumerate(picks[:2], start=1):
        pairs = lambda t: [t[i : i + 2] for i in range(0, len(t), 2)]  # noqa: E731
        expected.append(
            (
                (
                    pairs(r["inferred"]),
                    pairs(r["actual"]),
                    fig / "examples" / f"example_{k}",
                    f"{s}20m, game {r['id']}, trained-{s}",
                    f"LGM {r['lgm']:.3f}, loss {r['loss_inferred']:.3f}",
                    f"LGM {r['actual_lgm']:.3f}, loss {r['loss_actual']:.3f}",
                ),
                {},
            )
        )
    assert rec.of("sequence_pair") == expected
    assert rec.of("save") == []


def test_no_example_is_said_in_a_figure(tmp_path, monkeypatch):
    rec = Recorder(monkeypatch)
    inferred, scored = fake_tables()
    scored["loss_inferred"] = scored["loss_actual"] + 1  # never a lower loss
    (tmp_path / "ex").mkdir()  # a folder that is already there is written into
    written = write_examples([("pro", 6, inferred, scored)], tmp_path / "ex", 3, "net")
    assert written == [tmp_path / "ex/example_1.png"] and rec.of("sequence_pair") == []
    (((fig, stem), _),) = rec.of("save")
    assert stem == tmp_path / "ex/example_1"
    (text,) = fig.axes[0].texts
    assert text.get_text() == (
        "No arrangement had an inferred sequence with both a higher likelihood and a lower loss."
    )
    assert text.get_position() == (0.5, 0.5) and (text.get_ha(), text.get_va()) == ("center", "center")
    assert text.get_fontsize() == 9 and tuple(fig.get_size_inches()) == (6, 1)
    assert not fig.axes[0].axison


def test_summary_and_comparison_markdown_cell_by_cell(tmp_path, monkeypatch):
    rec = Recorder(monkeypatch)
    entries, tables = two_sets(tmp_path)
    entries[1] = ("kgs", 6, *entries[1][2:])  # a length the paper has no numbers for
    paper_path = REPO / "config/paper_results.yaml"
    paper = yaml.safe_load(paper_path.read_text())
    out = tmp_path / "out"
    out.mkdir()  # a folder that is already there is written into
    summary = make_report(entries, paper_path, out, tmp_path / "fig", "net-x", {"pro": "Fox pro"})  # no note
    assert len(rec.of("sequence_pair")) == 3  # three examples unless told
    assert list(pd.read_csv(out / "summary.csv").columns[:2]) == ["set", "n"]
    assert list(pd.read_csv(out / "paper_comparison.csv").columns[:3]) == ["set", "network", "paper set"]
    text = (out / "summary.md").read_text()
    assert text.startswith("# Summary\n\nnetwork net-x\n\n|")
    assert text.endswith("|\n")  # the second table ends the file: no cross-level table was given
    rows = md_rows(text)
    head = rows[0]
    assert [len(r) for r in rows] == [len(head)] * 3 + [5] * 3
    assert head[:2] == ["set", "n"] and not {"network", "dataset", "katago"} & set(head)
    pro = dict(zip(head, rows[1]))
    assert pro["set"] == "pro" and pro["n"] == "20" and pro["arrangements"] == "12"
    assert pro["lgm_slope"] == f"{summary.loc[0, 'lgm_slope']:.3f}"  # three decimals
    assert pro["exact_match_rate"] == "0.333"
    # The second table: who inferred and scored each set; a set with no dataset name is named by itself.
    assert rows[3] == ["set", "n", "network", "dataset", "katago"]
    assert rows[4:6] == [
        ["pro", "20", "net-x", "Fox pro", "g170 @ 8 visits"],
        ["kgs", "6", "net-x", "kgs", "g170 @ 8 visits"],
    ]
    comp_text = (out / "paper_comparison.md").read_text()
    assert comp_text.startswith(
        f"# Our numbers beside the paper's\n\nPaper: {paper['source']}; network {paper['network']}.\n"
        "Ours: network net-x.\n\n|"
    )
    assert comp_text.endswith("|\n")
    rows = md_rows(comp_text)
    assert rows[0][:3] == ["set", "network", "paper set"] and [len(r) for r in rows] == [len(rows[0])] * 3
    comp = dict(zip(rows[0], rows[1]))
    ref = paper["results"]["Pro"][20]
    assert comp["set"] == "pro20m" and comp["network"] == "net-x" and comp["paper set"] == "Pro20m"
    for key, name in (("share_on_or_above", "share on/above y=x"), ("lgm_slope", "LGM slope")):
        assert comp[f"{name} (ours)"] == f"{summary.loc[0, key]:.3f}"
        assert comp[f"{name} (paper)"] == f"{ref[key]:.3f}"
    kgs = dict(zip(rows[0], rows[2]))
    assert kgs["set"] == "kgs6m" and kgs["paper set"] == "-" and kgs["LGM slope (paper)"] == ""
    assert set(rows[0]) == {"set", "network", "paper set"} | {
        f"{name} ({who})" for _, name in COMPARED for who in ("ours", "paper")
    }


def test_network_names():
    assert networks_line("a") == "network a"
    assert networks_line({"pro": "a", "kgs": "a"}) == "network a"
    assert networks_line({"pro": "a", "kgs": "b"}) == "networks: pro a, kgs b"
    assert network_of("a", "pro") == "a" and network_of({"pro": "a"}, "pro") == "a"
    assert network_of({"pro": "a"}, "kgs") == ""
    inferred, scored = fake_tables()
    empty = build_summary([("pro", 6, inferred, scored.iloc[:0])], "a", {})
    assert empty.loc[0, "katago"] == ""
    one = build_summary([("pro", 6, inferred.iloc[:1], scored.iloc[:1])], "a", {})
    assert one.loc[0, "katago"] == "g170 @ 8 visits"
    # A set with no counterpart in the paper, and a length the paper did not infer: no paper numbers.
    paper = yaml.safe_load((REPO / "config/paper_results.yaml").read_text())
    summary = pd.DataFrame([{"set": "mine", "n": 20, "lgm_slope": 1.5}, {"set": "pro", "n": 30, "lgm_slope": 1.2}])
    comp = comparison_table(summary, paper)
    assert list(comp["paper set"]) == ["-", "-"] and comp["LGM slope (paper)"].isna().all()
    assert list(comp["LGM slope (ours)"]) == [1.5, 1.2] and list(comp["set"]) == ["mine20m", "pro30m"]
    # A counterpart named but with no results in the paper file.
    comp = comparison_table(summary.iloc[:1], {"counterparts": {"mine": "Mine"}, "results": {}})
    assert list(comp["paper set"]) == ["-"] and comp["LGM slope (paper)"].isna().all()


def test_examples_without_a_network_name_and_every_file_returned(tmp_path, monkeypatch):
    rec = Recorder(monkeypatch)
    inferred, scored = fake_tables(seed=3)
    written = write_examples([("pro", 6, inferred, scored)], tmp_path / "ex", 2)
    assert written == [tmp_path / "ex/example_1.png", tmp_path / "ex/example_2.png"]
    best = better_both_ways(scored)["id"].tolist()[:2]
    assert [args[3] for args, _ in rec.of("sequence_pair")] == [f"pro6m, game {i}" for i in best]


def test_how_sure_the_answers_were_per_set_and_pooled(tmp_path, monkeypatch):
    """The answers' stated chances (infer-set's JSONL beside its table) against what happened, worked out by
    hand: per set, pooled over the sets of a length, and the reliability diagrams' panels; a set whose
    answers stated none says why."""
    import json

    rec = Recorder(monkeypatch)
    entries, _ = two_sets(tmp_path)
    # pro: 4 answers stated a chance (moves 2 each), the first exact; kgs: 2 answers, one unstated.
    pro = [
        (0.9, True, [0.9, 0.6], ["aa", "bb"], ["aa", "bb"]),
        (0.8, False, [0.7, 0.3], ["aa", "bb"], ["bb", "aa"]),
        (0.2, False, [0.8, 0.1], ["aa", "bb"], ["aa", "cc"]),
        (0.1, False, [0.4, 0.2], ["aa", "bb"], ["cc", "dd"]),
    ]
    kgs = [(0.6, True, [0.5], ["aa"], ["aa"]), (None, False, None, ["aa"], ["bb"])]
    for (s, _, table, _), rows in zip(entries, (pro, kgs)):
        with open(Path(table).with_suffix(".jsonl"), "w") as f:
            for i, (c, e, m, inf, act) in enumerate(rows):
                note = None if c is not None else "no chance stated: the search found only 3 distinct orders"
                row = {"id": f"{s}{i}", "chance": c, "chance_note": note, "move_chances": m}
                f.write(json.dumps(row | {"exact_match": e, "inferred": inf, "actual": act}) + "\n")
    out = tmp_path / "out"
    make_report(entries, REPO / "config/paper_results.yaml", out, tmp_path / "fig", "net", {}, "N", 1)
    text = (out / "summary.md").read_text()
    section = text[text.index("## How sure the answers are") :]
    rows = {r[0]: r[1:] for r in md_rows(section[: section.index("Each move's chance")])}
    # pro by hand. ECE: one answer a bin, |0.9-1| + |0.8-0| + |0.2-0| + |0.1-0| over 4 = 0.3;
    # Brier (0.01 + 0.64 + 0.04 + 0.01) / 4 = 0.175; AUROC: the exact one above the three others = 1;
    # stated at 70% or more: 0.9 and 0.8, one exact.
    assert rows["pro20m"] == ["4", "1", "0.500", "0.250", "0.300", "0.175", "1.000", "2", "0.500"]
    # kgs: one answer, one unstated; AUROC needs both kinds; nothing at 70%.
    assert rows["kgs20m"] == ["1", "1", "0.600", "1.000", "0.400", "0.160", "", "0", ""]
    # Pooled: chances 0.9 0.8 0.2 0.1 0.6, exact 1 0 0 0 1; AUROC: pairs (0.9 | 0.6) above (0.8, 0.2, 0.1):
    # 0.9 beats 3, 0.6 beats 2 of 3: 5 of 6; ECE: bins 0.9, 0.8, 0.2, 0.1, 0.6 one each: (0.1+0.8+0.2+0.1+0.4)/5;
    # Brier (0.01 + 0.64 + 0.04 + 0.01 + 0.16) / 5.
    assert rows["pooled, 20 moves"][:7] == ["5", "2", "0.520", "0.400", "0.320", "0.172", "0.833"]
    # Each move: pro's 8 moves, right where inferred equals actual at that number (1, 1, 0, 0, 1, 0, 0, 0),
    # mean chance 4.0 / 8; in doubt (below 0.5): 0.3, 0.1, 0.4 and 0.2.
    moves = [r for r in md_rows(section) if r[0] == "pro20m"][1]
    assert moves[1:5] == ["8", "3", "0.500", "0.375"] and moves[-1] == "4"
    assert "kgs20m, 1 answer: no chance stated: the search found only 3 distinct orders." in section
    ((panels, stem, note), kw) = rec.of("reliability_diagram")[0]
    assert stem == tmp_path / "fig/reliability" and note == "N"
    assert panels["pro20m"] == {"chance": [0.9, 0.8, 0.2, 0.1], "truth": [True, False, False, False]}
    assert panels["pooled, 20 moves"]["chance"] == [0.9, 0.8, 0.2, 0.1, 0.6]
    ((moves_panels, stem, _), kw) = rec.of("reliability_diagram")[1]
    assert stem == tmp_path / "fig/reliability_moves" and kw["what"] == "the move's number right"
    assert moves_panels["every move, 20-move answers"]["truth"] == [
        True,
        True,
        False,
        False,
        True,
        False,
        False,
        False,
        True,
    ]
