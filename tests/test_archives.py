"""Unpacking 7z (also multi-volume), tar.gz and zip, and refusing unsafe members."""

import io
import tarfile
import zipfile

import py7zr
import pytest

from moveorder.data.archives import UnsafeArchiveError, extract_all, group_volumes


def make_7z(path, files):
    with py7zr.SevenZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(data, name)


def test_multi_volume_7z(tmp_path):
    files = {f"1d/game{i}.sgf": (b"(;GM[1]SZ[19];B[dd])" * 50 + bytes([i])) for i in range(40)}
    whole = tmp_path / "whole.7z"
    make_7z(whole, files)
    data = whole.read_bytes()
    step = len(data) // 3 + 1
    vols = []
    for k in range(3):
        v = tmp_path / f"1d.7z.{k + 1:03d}"
        v.write_bytes(data[k * step : (k + 1) * step])
        vols.append(v)
    assert group_volumes(list(reversed(vols))) == [vols]
    out = extract_all(vols, tmp_path / "out")
    assert [p.name for p in out] == ["1d.7z"]
    got = sorted(p.relative_to(out[0]).as_posix() for p in out[0].rglob("*.sgf"))
    assert got == sorted(files)
    assert (out[0] / "1d/game7.sgf").read_bytes() == files["1d/game7.sgf"]


def test_tar_gz_and_zip(tmp_path):
    tgz = tmp_path / "kgs.tar.gz"
    with tarfile.open(tgz, "w:gz") as t:
        info = tarfile.TarInfo("kgs/a.sgf")
        info.size = 5
        t.addfile(info, io.BytesIO(b"(;B[])"[:5]))
    zp = tmp_path / "set.zip"
    with zipfile.ZipFile(zp, "w") as z:
        z.writestr("z/b.sgf", "(;)")
    out = extract_all([tgz, zp], tmp_path / "out")
    assert (out[0] / "kgs/a.sgf").exists() and (out[1] / "z/b.sgf").exists()


def test_traversal_refused(tmp_path, monkeypatch):
    zp = tmp_path / "evil.zip"
    with zipfile.ZipFile(zp, "w") as z:
        z.writestr("../../escape.sgf", "(;)")
    with pytest.raises(UnsafeArchiveError, match=r"evil.zip.*escape.sgf"):
        extract_all([zp], tmp_path / "out")
    assert not (tmp_path / "escape.sgf").exists()

    tgz = tmp_path / "evil.tar.gz"
    with tarfile.open(tgz, "w:gz") as t:
        info = tarfile.TarInfo("/etc/evil.sgf")
        info.size = 0
        t.addfile(info, io.BytesIO(b""))
    with pytest.raises(UnsafeArchiveError, match="outside"):
        extract_all([tgz], tmp_path / "out2")

    seven = tmp_path / "evil.7z"
    with monkeypatch.context() as m:  # py7zr will not write such a name unless told to
        m.setattr(py7zr.py7zr, "check_archive_path", lambda name: True)
        make_7z(seven, {"../up.sgf": b"(;)"})
    with pytest.raises(UnsafeArchiveError):
        extract_all([seven], tmp_path / "out3")
    assert not (tmp_path / "up.sgf").exists()
