"""The network shipped with the package: present, documented, read by name, and the one-position tool's default."""

import hashlib
import subprocess
import sys

import pytest
from sgfmill import sgf

from moveorder import settings
from moveorder.nets import shipped
from moveorder.nets.networks import load_policy
from test_networks import POSITIONS, assert_matches_leelaz

OPENING = "pd dp qp dd fq cn qf nc pj jp".split()
NAME = settings.SHIPPED_NETWORK


def test_the_default_network_is_shipped():
    """The one-position tool's default is one of the shipped networks (each checked below)."""
    assert NAME in shipped.names() and {"tygem", "tygem-6x128"} <= set(shipped.names())


@pytest.mark.parametrize("name", shipped.names())
def test_every_shipped_network_is_documented_and_read_as_leela_zero_reads_it(name):
    """Each file is at most 10 MB, described by its own JSON, and gives Leela Zero's own policy (leelaz)."""
    path = shipped.weights(name)
    assert path.stat().st_size <= 10 * 1024 * 1024
    info = shipped.info(name)
    assert info["name"] == name and info["weights_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    net = load_policy(name)
    assert (net.blocks_n, net.filters) == (info["config"]["blocks"], info["config"]["filters"])
    assert {"command", "commit", "config", "heldout"} <= set(info)
    assert all(0 < info["heldout"][level]["top1_accuracy"] < 1 for level in ("pro", "kgs", "tygem"))
    checked, _ = assert_matches_leelaz(net, path, POSITIONS[::6])
    assert checked > 4 * 330


def test_a_name_that_is_not_shipped_is_refused_with_the_names():
    with pytest.raises(ValueError, match=f"no shipped network named 'best_v2'; shipped: .*{NAME}"):
        shipped.weights("best_v2")


def test_a_users_file_of_the_same_name_is_read_as_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / NAME).write_text("not a network")
    assert shipped.resolve(NAME) == tmp_path.joinpath(NAME).relative_to(tmp_path)
    # Read, and refused, as the user's file: not silently replaced by the shipped network.
    with pytest.raises(ValueError, match=f"^{NAME}: weights format version 'not a network'"):
        load_policy(NAME)


def test_infer_with_no_network_uses_the_shipped_one(tmp_path):
    """A fresh install answers "how was this played?" with no --network (a real subprocess, as a player runs it)."""
    black, white = sorted(OPENING[0::2]), sorted(OPENING[1::2])
    pos = tmp_path / "pos.sgf"
    pos.write_text(f"(;GM[1]FF[4]SZ[19]AB{''.join(f'[{p}]' for p in black)}AW{''.join(f'[{p}]' for p in white)})")
    out = tmp_path / "ordered.sgf"
    proc = subprocess.run(
        [sys.executable, "-m", "moveorder", "infer", str(pos), "-o", str(out), "--method", "beam", "--beam-width", "8"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    game = sgf.Sgf_game.from_bytes(out.read_bytes())
    moves = [n.get_move() for n in game.get_main_sequence()[1:]]
    assert [c for c, _ in moves] == ["b", "w"] * 5
    played = [f"{'abcdefghijklmnopqrs'[col]}{'abcdefghijklmnopqrs'[18 - row]}" for _, (row, col) in moves]
    assert sorted(played[0::2]) == black and sorted(played[1::2]) == white
    assert f"network {NAME};" in game.get_root().get("C")


def test_every_loader_refuses_an_unknown_network_naming_the_shipped_ones(tmp_path):
    """load_policy (every verb's loader, not only infer's option check) names what was given and the
    shipped networks, for a missing file and for a folder."""
    with pytest.raises(
        FileNotFoundError,
        match=r"^'tygem-9x999': no such network file, .*\(shipped: tygem, tygem-6x128\)",
    ):
        load_policy("tygem-9x999")
    with pytest.raises(FileNotFoundError, match=r": is a folder, and no network of that name is shipped"):
        load_policy(tmp_path)
