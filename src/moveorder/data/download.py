"""Fetching files by URL: mirror, resume, retries, sha256, atomic rename.

``fetch(url, dest, sha256=..., mirror=...)`` is the only way the pipeline
gets a file from outside.  With ``mirror`` set to a folder, ``https://HOST/PATH``
is read from ``MIRROR/HOST/PATH`` instead of the network (the offline mirror
in ``shared/data``); either way the bytes go to ``dest + ".part"`` first, are
hashed, and are renamed onto ``dest`` only when the sha256 matches.  Over
HTTP a partial ``.part`` is resumed with a ``Range`` request, and failures
are retried with exponential back-off.  When no sha256 is given the actual
one is written to ``dest + ".sha256"`` so it can be recorded in config.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import time
import urllib.parse
from pathlib import Path
from typing import Optional

import requests
from tqdm import tqdm

log = logging.getLogger(__name__)
CHUNK = 1 << 20


class ChecksumError(RuntimeError):
    """The downloaded bytes do not have the expected sha256."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def check_sha256(sha256: Optional[str], url: str = "") -> Optional[str]:
    """``sha256`` in lower case, None if empty; ValueError unless it is 64 hexadecimal digits.

    Checked before anything is downloaded, so a mistyped hash costs nothing.
    """
    if not sha256:
        return None
    value = sha256.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", value):
        raise ValueError(
            f"{url + ': ' if url else ''}--sha256 {sha256!r} is not a sha256 "
            f"(64 hexadecimal digits; got {len(sha256.strip())} characters)"
        )
    return value


def mirror_path(url: str, mirror: Path) -> Path:
    """``https://HOST/PATH`` -> ``MIRROR/HOST/PATH`` (query strings are not allowed)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"cannot mirror {url!r}: not an http(s) URL")
    rel = urllib.parse.unquote(parts.path).lstrip("/")
    if ".." in Path(rel).parts:
        raise ValueError(f"cannot mirror {url!r}: '..' in its path")
    return Path(mirror) / parts.netloc / rel


def _progress(total: Optional[int], initial: int, name: str, quiet: bool):
    return tqdm(total=total, initial=initial, unit="B", unit_scale=True, desc=name, disable=quiet, leave=False)


def _copy_local(src: Path, part: Path, quiet: bool) -> None:
    if not src.is_file():
        raise FileNotFoundError(f"{src}: not in the mirror")
    with open(src, "rb") as fin, open(part, "wb") as fout, _progress(src.stat().st_size, 0, src.name, quiet) as bar:
        for block in iter(lambda: fin.read(CHUNK), b""):
            fout.write(block)
            bar.update(len(block))


def _http_get(url: str, part: Path, timeout: float, quiet: bool) -> None:
    """Append to ``part`` from where it stops; restart it if the server ignores Range."""
    done = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={done}-"} if done else {}
    with requests.get(url, stream=True, timeout=timeout, headers=headers) as r:
        if r.status_code == 416:  # the part is already whole
            return
        r.raise_for_status()
        if done and r.status_code != 206:
            done = 0
        length = r.headers.get("Content-Length")
        total = done + int(length) if length is not None else None
        with open(part, "ab" if done else "wb") as f, _progress(total, done, Path(part).stem, quiet) as bar:
            for block in r.iter_content(1 << 16):
                f.write(block)
                bar.update(len(block))
        if total is not None and part.stat().st_size < total:
            raise requests.ConnectionError(f"{url}: connection closed at {part.stat().st_size} of {total} bytes")


def fetch(
    url: str,
    dest: Path,
    sha256: Optional[str] = None,
    mirror: Optional[Path] = None,
    retries: int = 5,
    backoff: float = 1.0,
    timeout: float = 60.0,
    quiet: bool = False,
) -> Path:
    """Make ``dest`` hold the file at ``url`` and return ``dest``.

    ``url`` may also be ``file://...`` or a plain local path.  A ``sha256``
    that is not 64 hexadecimal digits raises ValueError before anything is
    fetched.  A wrong sha256 raises :class:`ChecksumError` naming the file and both hashes; the bad
    bytes are removed so a rerun starts clean.
    """
    sha256 = check_sha256(sha256, url)
    if retries < 0:
        raise ValueError(f"{url}: retries must be 0 or more, not {retries}")
    dest = Path(dest)
    if dest.is_dir():
        raise ValueError(f"{dest}: is a folder; the destination must be a file path")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() and sha256 and sha256_of(dest) == sha256.lower():
        return dest
    part = dest.with_name(dest.name + ".part")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme in ("http", "https") and mirror is not None:
        _copy_local(mirror_path(url, mirror), part, quiet)
    elif parsed.scheme in ("http", "https"):
        for attempt in range(retries + 1):
            try:
                _http_get(url, part, timeout, quiet)
                break
            except (
                requests.ConnectionError,
                requests.Timeout,
                requests.HTTPError,
                requests.exceptions.ChunkedEncodingError,
            ) as err:
                status = getattr(getattr(err, "response", None), "status_code", None)
                if attempt == retries or (status is not None and 400 <= status < 500 and status != 429):
                    raise RuntimeError(f"{url}: download failed after {attempt + 1} tries: {err}") from err
                wait = backoff * 2**attempt
                log.warning("%s: %s; retrying in %.1f s", url, err, wait)
                time.sleep(wait)
    else:
        _copy_local(Path(urllib.parse.unquote(parsed.path) if parsed.scheme == "file" else url), part, quiet)
    actual = sha256_of(part)
    if sha256 and actual != sha256.lower():
        part.unlink()
        raise ChecksumError(f"{dest.name} (from {url}): sha256 mismatch: expected {sha256.lower()}, got {actual}")
    if not sha256:
        log.warning("%s: no sha256 in config; actual sha256 is %s (written to %s.sha256)", url, actual, dest.name)
        Path(str(dest) + ".sha256").write_text(f"{actual}  {dest.name}\n")
    os.replace(part, dest)
    return dest


def copy_tree_or_file(src: Path, dest: Path) -> None:
    """Copy a user's local dataset (a folder or one file) to ``dest``."""
    src = Path(src)
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True)
    elif src.is_file():
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / src.name)
    else:
        raise FileNotFoundError(f"{src}: local dataset path does not exist")
