"""Unpacking downloaded archives safely.

Formats: 7z (one file, or a multi-volume set ``NAME.7z.001``, ``.002``, ...
which is one archive split into byte ranges), ``tar`` with gzip/bzip2/xz,
and zip; a plain ``.sgf`` file is copied as it is, and any other file is
refused.  Every member is checked before anything is written: an absolute
path, a ``..`` that climbs out, or a link (in any format) raises
:class:`UnsafeArchiveError` naming the archive and the member.  A truncated
or corrupt archive raises :class:`ArchiveError` naming it.  Archives are
unpacked into a hidden folder beside the target and moved into place only
when every one of them unpacked, so a failure leaves nothing behind.
"""

from __future__ import annotations

import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import List, Sequence

import py7zr

FORMATS = ("7z", "tar", "zip")
_KNOWN = ".7z, .7z.001 (volumes), .tar, .tar.gz/.tgz, .tar.bz2/.tbz2, .tar.xz/.txz or .zip"


class ArchiveError(ValueError):
    """An archive that cannot be unpacked: unknown type, truncated or corrupt."""


class UnsafeArchiveError(ArchiveError):
    """An archive member would land outside the target folder."""


def detect_format(name: str) -> str:
    low = name.lower()
    if re.search(r"\.7z(\.\d+)?$", low):
        return "7z"
    if re.search(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2|tar\.xz|txz)$", low):
        return "tar"
    if low.endswith(".zip"):
        return "zip"
    raise ArchiveError(
        f"{name}: unknown archive type (expected {_KNOWN}, or an .sgf file, which is copied as "
        "it is; --format 7z|tar|zip names the format of a file whose name does not)"
    )


def check_member(archive: Path, name: str) -> None:
    """Refuse member names that are absolute or climb out of the target folder."""
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", name) or ".." in pure.parts:
        raise UnsafeArchiveError(f"{archive}: member {name!r} would land outside the target folder")


def _link(archive: Path, name: str) -> UnsafeArchiveError:
    return UnsafeArchiveError(
        f"{archive}: member {name!r} is a link (links are refused: one could point outside the target folder)"
    )


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
        tmp = tempfile.NamedTemporaryFile(dir=dest.parent, prefix=".join-", suffix=".7z", delete=False)
        with tmp:
            for v in volumes:
                with open(v, "rb") as f:
                    shutil.copyfileobj(f, tmp)
        src = Path(tmp.name)
    try:
        with py7zr.SevenZipFile(src, "r") as z:
            for f in z.files:
                check_member(volumes[0], f.filename)
                if f.is_symlink or f.is_junction:
                    raise _link(volumes[0], f.filename)
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
                raise _link(archive, m.name)
        t.extractall(dest, members=members, filter="data")
        # Read the compressed stream to its end: only there do gzip and xz check their CRC, so a
        # corrupt member's data would otherwise pass unnoticed.
        while t.fileobj.read(1 << 20):
            pass


def _extract_zip(archive: Path, dest: Path) -> None:
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            check_member(archive, info.filename)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise _link(archive, info.filename)
        z.extractall(dest)  # reads every member whole, so a CRC mismatch raises BadZipFile


def extract(volumes: Sequence[Path], dest: Path, fmt: str | None = None) -> None:
    """Unpack one archive (``volumes`` has several entries for a split 7z) into ``dest``.

    Raises :class:`ArchiveError` naming the archive for an unknown type or a
    truncated or corrupt archive, :class:`UnsafeArchiveError` for an unsafe
    member.  What was unpacked before an error stays in ``dest``:
    :func:`extract_all` unpacks into a temporary folder and removes it.
    """
    volumes = [Path(v) for v in volumes]
    dest = Path(dest)
    fmt = fmt or detect_format(str(volumes[0]))
    if fmt not in FORMATS:
        raise ArchiveError(f"{volumes[0]}: unknown archive format {fmt!r} (expected one of {', '.join(FORMATS)})")
    if fmt != "7z" and len(volumes) > 1:
        raise ArchiveError(f"{volumes[0]}: only 7z archives may come in volumes")
    for v in volumes:
        if not v.is_file():
            raise FileNotFoundError(f"{v}: no such file")
    dest.mkdir(parents=True, exist_ok=True)
    name = volumes[0] if len(volumes) == 1 else f"{volumes[0]} (+{len(volumes) - 1} volumes)"
    try:
        if fmt == "7z":
            _extract_7z(volumes, dest)
        elif fmt == "tar":
            _extract_tar(volumes[0], dest)
        else:
            _extract_zip(volumes[0], dest)
    except ArchiveError:
        raise
    except Exception as err:  # every library has its own errors for a truncated or corrupt file
        detail = " ".join(str(err).split())
        detail = detail if len(detail) <= 300 else detail[:297] + "..."
        raise ArchiveError(
            f"{name}: cannot unpack this {fmt} archive (truncated, corrupt, or not {fmt}): "
            f"{type(err).__name__}: {detail}"
        ) from err


def unpack_inputs(files: Sequence[Path], dest: Path, fmt: str | None = None) -> List[Path]:
    """A dataset's inputs into ``dest``: one local folder is copied as it is; anything else :func:`extract_all`."""
    from moveorder.data.download import copy_tree_or_file

    files = [Path(f) for f in files]
    if len(files) == 1 and files[0].is_dir():
        copy_tree_or_file(files[0], Path(dest))
        return [Path(dest)]
    return extract_all(files, dest, fmt)


def extract_all(files: Sequence[Path], dest: Path, fmt: str | None = None) -> List[Path]:
    """Unpack every archive among ``files`` (volumes grouped) into ``dest/<archive name>/``.

    A plain ``.sgf`` file is copied as it is (into ``dest/<file name>/``);
    any other file that is not an archive is refused.  All or nothing: the
    archives are unpacked into a hidden folder in ``dest`` and moved into
    place only when every one has unpacked; on any error nothing is left
    (not even ``dest`` if this call made it).  Returns the folders written.
    """
    files = [Path(f) for f in files]
    dest = Path(dest)
    if not files:
        raise ValueError("no files to unpack")
    for f in files:
        if not f.exists():
            raise FileNotFoundError(f"{f}: no such file")
        if not f.is_file():
            raise ValueError(f"{f}: not a file (one folder of records is copied only when given alone)")
    groups = group_volumes(files)
    kinds = []
    for group in groups:  # refuse an unknown type before anything is written
        if fmt:
            kinds.append(fmt)
        elif group[0].suffix.lower() == ".sgf" and len(group) == 1:
            kinds.append("sgf")
        else:
            kinds.append(detect_format(str(group[0])))
    made_dest = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=dest, prefix=".unpacking-"))
    try:
        staged = []
        for group, kind in zip(groups, kinds):
            name = re.sub(r"\.7z\.\d+$", ".7z", group[0].name, flags=re.IGNORECASE)
            stage = work / name
            if kind == "sgf":
                stage.mkdir()
                shutil.copy2(group[0], stage / group[0].name)
            else:
                extract(group, stage, kind)
            staged.append((stage, dest / name))
        out = []
        for stage, target in staged:
            if target.exists():
                shutil.rmtree(target)
            stage.rename(target)
            out.append(target)
        return out
    except BaseException:
        if made_dest:
            shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
