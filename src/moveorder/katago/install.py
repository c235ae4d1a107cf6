"""Installing the real KataGo engine: from the katrain wheel on PyPI, or a user's own build.

``install_from_katrain(dest)`` downloads ``katrain==1.20.0`` with ``pip
download --no-deps`` (sha256 checked), takes its Linux KataGo (an AppImage:
unpacked with ``--appimage-extract``, no FUSE needed) and its
``b10c384h6nbttflrs`` model, and writes:

* ``dest/bin/katago``: a wrapper that runs the unpacked binary with its
  bundled libraries on ``LD_LIBRARY_PATH``;
* ``dest/models/b10c384h6nbttflrs.bin.gz``;
* ``dest/opencl-tune.txt``: an OpenCL tuning file, so KataGo skips its own
  autotuning (over 20 minutes on a CPU with pocl, and it crashed there on
  the transformer model).  Results do not depend on tuning parameters.

That KataGo uses OpenCL; on a machine without a GPU, Debian's
``ocl-icd-libopencl1`` and ``pocl-opencl-icd`` run it on the CPU.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from moveorder.data.download import ChecksumError, sha256_of
from moveorder.settings import KATRAIN_MODEL

log = logging.getLogger(__name__)

KATRAIN_VERSION = "1.20.0"
KATRAIN_SHA256 = "489caa966fa395a6ad459239641a927e4a2057963370e450109fe77120de662f"

# OpenCL tuning for KataGo's tuner format VERSION=13: one "#name" line and one parameter line per
# kernel.  Small, always-valid work-group shapes: pocl on a CPU gains nothing from larger ones.
TUNE_SECTIONS = [
    ("canUseFP16Storage", "0"),
    ("canUseFP16Compute", "0"),
    ("canUseFP16TensorCores", "0"),
    ("canUseFP16TensorCoresFor1x1", "0"),
    ("shouldUseFP16Storage", "0"),
    ("shouldUseFP16Compute", "0"),
    ("shouldUseFP16TensorCores", "0"),
    ("shouldUseFP16TensorCoresFor1x1", "0"),
    ("xGemmDirect", "WGD=32 MDIMCD=8 NDIMCD=8 MDIMAD=8 NDIMBD=8 KWID=2 VWMD=4 VWND=2 PADA=1 PADB=1"),
    ("xGemm", "MWG=16 NWG=16 KWG=16 MDIMC=8 NDIMC=8 MDIMA=8 NDIMB=8 KWI=2 VWM=2 VWN=2 STRM=0 STRN=0 SA=0 SB=0"),
    ("xGemm16", "MWG=8 NWG=8 KWG=8 MDIMC=1 NDIMC=1 MDIMA=1 NDIMB=1 KWI=1 VWM=1 VWN=1 STRM=0 STRN=0 SA=0 SB=0"),
    ("hGemmWmma", "MWG=16 NWG=16 KWG=16 MWAVE=16 NWAVE=16 MWARP=16 NWARP=16 VWM=2 VWN=2 SA=0 SB=0"),
    (
        "hGemmWmmaNCHW",
        "MWG=16 NWG=16 KWG=16 MWAVE=16 NWAVE=16 MWARP=16 NWARP=16 VWM=1 VWN=2 SB=0 "
        "PAD_ELTS_PER_THREAD=1 PAD_ROWS_PER_THREAD=1",
    ),
    (
        "conv3x3",
        "INTILE_XSIZE=6 INTILE_YSIZE=6 OUTTILE_XSIZE=4 OUTTILE_YSIZE=4 transLocalSize0=4 "
        "transLocalSize1=8 untransLocalSize0=8 untransLocalSize1=2 untransLocalSize2=4",
    ),
    (
        "conv5x5",
        "INTILE_XSIZE=6 INTILE_YSIZE=6 OUTTILE_XSIZE=2 OUTTILE_YSIZE=2 transLocalSize0=1 "
        "transLocalSize1=1 untransLocalSize0=1 untransLocalSize1=1 untransLocalSize2=1",
    ),
    ("gPool", "XYSTRIDE=4 CHANNELSTRIDE=4 BATCHSTRIDE=4"),
    ("transformer", "ATTN_BLOCK_Q=128 ATTN_BLOCK_KV=64 Q_PER_THREAD=1 USE_TILED_ATTN=1"),
    ("transformerRMSNorm", "WG_C_SIZE=32 WG_XY_SIZE=1 C_PER_THREAD=4"),
    ("pointWise", "ELTS_PER_THREAD=1 LOCAL_SIZE=32"),
    ("addChannelBiasesNCHW", "XY_ELTS_PER_THREAD=1 NC_ELTS_PER_THREAD=1"),
    ("spatialRMSNorm", "TILE_SIZE=32 APPLY_ELTS_PER_THREAD=1"),
]


def tuning_text() -> str:
    lines = ["VERSION=13"]
    for name, params in TUNE_SECTIONS:
        lines += [f"#{name}", params]
    return "\n".join(lines) + "\n"


def _wrapper(root: Path) -> str:
    return (
        "#!/bin/sh\n# KataGo from the katrain wheel, unpacked from its AppImage.\n"
        f'export LD_LIBRARY_PATH="{root}/usr/lib${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"\n'
        f'exec "{root}/usr/bin/katago" "$@"\n'
    )


def install_from_katrain(dest: Path, wheel: Path | None = None) -> Path:
    """Install KataGo and its model from the katrain wheel into ``dest``; return the wrapper's path."""
    dest = Path(dest).resolve()
    (dest / "bin").mkdir(parents=True, exist_ok=True)
    (dest / "models").mkdir(exist_ok=True)
    if wheel is None:
        wheel = dest / f"katrain-{KATRAIN_VERSION}-py3-none-any.whl"
        if not wheel.exists() or sha256_of(wheel) != KATRAIN_SHA256:
            with tempfile.TemporaryDirectory(dir=dest) as tmp:
                log.info("pip download katrain==%s", KATRAIN_VERSION)
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pip",
                        "download",
                        "--no-deps",
                        "--quiet",
                        f"katrain=={KATRAIN_VERSION}",
                        "-d",
                        tmp,
                    ],
                    check=True,
                )
                got = next(Path(tmp).glob("katrain-*.whl"))
                shutil.move(str(got), wheel)
    actual = sha256_of(wheel)
    if actual != KATRAIN_SHA256:
        raise ChecksumError(f"{wheel}: sha256 mismatch: expected {KATRAIN_SHA256}, got {actual}")
    with zipfile.ZipFile(wheel) as z:
        with z.open("katrain/KataGo/katago") as src, open(dest / "katago.AppImage", "wb") as out:
            shutil.copyfileobj(src, out)
        with z.open(f"katrain/models/{KATRAIN_MODEL}") as src, open(dest / "models" / KATRAIN_MODEL, "wb") as out:
            shutil.copyfileobj(src, out)
    appimage = dest / "katago.AppImage"
    appimage.chmod(appimage.stat().st_mode | stat.S_IXUSR)
    root = dest / "squashfs-root"
    if root.exists():
        shutil.rmtree(root)
    subprocess.run([str(appimage), "--appimage-extract"], cwd=dest, check=True, stdout=subprocess.DEVNULL)
    appimage.unlink()
    wrapper = dest / "bin" / "katago"
    wrapper.write_text(_wrapper(root))
    wrapper.chmod(0o755)
    (dest / "opencl-tune.txt").write_text(tuning_text())
    version = subprocess.run([str(wrapper), "version"], capture_output=True, text=True, timeout=120)
    if version.returncode != 0:
        raise RuntimeError(f"{wrapper}: 'katago version' failed: {version.stderr[-500:]}")
    log.info("installed %s", version.stdout.strip().splitlines()[0] if version.stdout else wrapper)
    return wrapper


def link_user_binary(binary: Path, dest: Path) -> Path:
    """Use a KataGo the user already has (CUDA, TensorRT, Eigen, OpenCL build) by path."""
    binary = Path(binary)
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise FileNotFoundError(f"{binary}: not an executable KataGo binary")
    (Path(dest) / "bin").mkdir(parents=True, exist_ok=True)
    wrapper = Path(dest) / "bin" / "katago"
    wrapper.write_text(f'#!/bin/sh\nexec "{binary.resolve()}" "$@"\n')
    wrapper.chmod(0o755)
    (Path(dest) / "opencl-tune.txt").write_text(tuning_text())
    (Path(dest) / "models").mkdir(exist_ok=True)
    return wrapper
