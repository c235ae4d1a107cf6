"""Unpacking downloaded archives safely.

Formats: 7z (one file, or a multi-volume set ``NAME.7z.001``, ``.002``, ...
which is one archive split into byte ranges), ``tar`` with gzip/bzip2/xz,
and zip.  Every member name is checked before anything is written: an
absolute path, a ``..`` that climbs out, or a link raises
:class:`UnsafeArchiveError` naming the archive and the member.
"""

from __future__ import annotations

import re
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import List, Sequence

import py7zr

FORMATS = ("7z", "tar", "zip")


class UnsafeArchiveError(ValueError):
    """An archive member would land outside the target folder."""


def detect_format(name: str) -> str:
    low = name.lower()
    if re.search(r"\.7z(\.\d+)?$", low):
        return "7z"
    if re.search(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2|tar\.xz|txz)$", low):
        return "tar"
    if low.endswith(".zip"):
        return "zip"
    raise ValueError(f"{name}: unknown archive format (expected 7z, tar.* or zip)")


def check_member(archive: Path, name: str) -> None:
    """Refuse member names that are absolute or climb out of the target folder."""
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", name) or ".." in pure.parts:
        raise UnsafeArchiveError(f"{archive}: member {name!r} would land outside the target folder")


def group_volumes(files: Sequence[Path]) -> List[List[Path]]:
    """Group ``X.7z.001, X.7z.002, ...`` into one entry (in volume order); others alone."""
    groups: dict = {}
    order: List[str] = []
    for f in sorted(map(Path, files)):
        m = re.match(r"^(.*\.7z)\.(\d+)$", f.name, re.IGNORECASE)
        key = str(f.with_name(m.group(1))) if m else str(f)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(f)
    return [sorted(groups[k], key=lambda p: (len(p.name), p.name)) for k in order]


def _extract_7z(volumes: Sequence[Path], dest: Path) -> None:
    src = volumes[0]
    tmp = None
    if len(volumes) > 1:
        # A multi-volume 7z is one archive cut into pieces: join them back.
        tmp = tempfile.NamedTemporaryFile(dir=dest, suffix=".7z", delete=False)
        with tmp:
            for v in volumes:
                with open(v, "rb") as f:
                    shutil.copyfileobj(f, tmp)
        src = Path(tmp.name)
    try:
        with py7zr.SevenZipFile(src, "r") as z:
            for name in z.getnames():
                check_member(volumes[0], name)
            z.extractall(path=dest)
    finally:
        if tmp is not None:
            Path(tmp.name).unlink(missing_ok=True)


def _extract_tar(archive: Path, dest: Path) -> None:
    with tarfile.open(archive, "r:*") as t:
        members = t.getmembers()
        for m in members:
            check_member(archive, m.name)
            if m.issym() or m.islnk():
                raise UnsafeArchiveError(f"{archive}: member {m.name!r} is a link")
        t.extractall(dest, members=members, filter="data")


def _extract_zip(archive: Path, dest: Path) -> None:
    with zipfile.ZipFile(archive) as z:
        for name in z.namelist():
            check_member(archive, name)
        z.extractall(dest)


def extract(volumes: Sequence[Path], dest: Path, fmt: str | None = None) -> None:
    """Unpack one archive (``volumes`` has several entries for a split 7z) into ``dest``."""
    volumes = [Path(v) for v in volumes]
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    fmt = fmt or detect_format(volumes[0].name)
    if fmt == "7z":
        _extract_7z(volumes, dest)
    elif len(volumes) > 1:
        raise ValueError(f"{volumes[0]}: only 7z archives may come in volumes")
    elif fmt == "tar":
        _extract_tar(volumes[0], dest)
    elif fmt == "zip":
        _extract_zip(volumes[0], dest)
    else:
        raise ValueError(f"{volumes[0]}: unknown archive format {fmt!r}")


def extract_all(files: Sequence[Path], dest: Path, fmt: str | None = None) -> List[Path]:
    """Unpack every archive among ``files`` (volumes grouped) into ``dest/<archive name>/``.

    A file that is not an archive (e.g. a plain ``.sgf``) is copied as it is.
    Returns the folders written.
    """
    out = []
    for group in group_volumes(files):
        name = re.sub(r"\.7z\.\d+$", ".7z", group[0].name)
        target = Path(dest) / name
        if target.exists():
            shutil.rmtree(target)
        try:
            kind = fmt or detect_format(group[0].name)
        except ValueError:
            target.mkdir(parents=True)
            shutil.copy2(group[0], target / group[0].name)
        else:
            extract(group, target, kind)
        out.append(target)
    return out
