"""The device the networks run on, and the arithmetic there: the one home of what differs between a CPU and a GPU.

What each choice is on each device:

| choice                    | CPU                                            | CUDA                                                   |
|---------------------------|------------------------------------------------|--------------------------------------------------------|
| default device            | when torch sees no CUDA device                 | when torch sees one (``cuda``, i.e. ``cuda:0``)         |
| GPU asked for, none seen  | --                                             | refused, naming the torch build and the GPUs allotted  |
| GPU allotted, none seen   | the CPU, with a warning (a CPU-only torch)     | --                                                     |
| ``float32`` arithmetic    | IEEE float32                                   | IEEE float32: TF32 off in cuDNN and cuBLAS, per call   |
| ``tf32``                  | refused                                        | TF32 in cuDNN and cuBLAS, per call                     |
| ``bfloat16``              | autocast; softmax and symmetry mean in float32 | autocast; softmax and symmetry mean in float32         |
| training ``auto``         | bfloat16 with AVX512-BF16 or AMX (x86)         | bfloat16 from compute capability 8.0 (Ampere) on       |
| cuDNN algorithms          | --                                             | deterministic, no benchmarking, per call               |
| timing a network call     | wall time                                      | wall time after ``synchronize``, only when asked       |

"Per call": :func:`arithmetic` sets cuDNN's and cuBLAS's switches for the duration of one network
call and puts back what it found, so two likelihoods of different precision in one process do not
change each other's arithmetic.  The switches have no effect on a CPU; CPU results do not depend
on anything here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
from pathlib import Path
from typing import Iterator, Optional, Union

import torch

log = logging.getLogger(__name__)

#: Values of CUDA_VISIBLE_DEVICES that hide every GPU.
_NO_DEVICES = ("", "-1", "NoDevFiles", "none")


def gpus_allotted() -> Optional[str]:
    """What says this process was given a GPU (scheduler variables, NVIDIA device files), or None.

    Read without torch: it is what a job was promised, to hold against what torch can use.
    """
    for var in ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE"):
        value = os.environ.get(var, "").strip()
        if value not in _NO_DEVICES and not (var == "SLURM_GPUS_ON_NODE" and value == "0"):
            return f"{var}={value}"
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        return None  # set, to hide every GPU
    usable = [p for p in sorted(Path("/dev").glob("nvidia[0-9]*")) if os.access(p, os.R_OK | os.W_OK)]
    return f"{usable[0]}" if usable else None


def gpu_present() -> bool:
    """Whether this process has a GPU, for torch or for another program (KataGo finds it through OpenCL)."""
    return torch.cuda.is_available() or gpus_allotted() is not None


def why_no_cuda() -> str:
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is built without CUDA"
    return f"torch {torch.__version__} (CUDA {torch.version.cuda}) finds no usable device"


def resolve(requested: Optional[Union[str, torch.device]] = None) -> torch.device:
    """The device to run on: ``requested`` (``cpu``, ``cuda``, ``cuda:1``, ...), or a GPU when torch sees one.

    A CUDA device torch cannot see is refused (ValueError naming the torch build); with none
    requested, a process given a GPU that torch cannot use runs on the CPU with a warning.
    """
    if requested is None or str(requested) == "":
        if torch.cuda.is_available():
            return torch.device("cuda")
        allotted = gpus_allotted()
        if allotted:
            log.warning("this job was given a GPU (%s) but %s: running on the CPU", allotted, why_no_cuda())
        return torch.device("cpu")
    try:
        device = torch.device(requested)
    except RuntimeError as err:
        raise ValueError(f"device {requested!r}: {err}") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            allotted = gpus_allotted()
            given = f"; the job was given {allotted}" if allotted else ""
            raise ValueError(
                f"device {requested!r}: {why_no_cuda()}{given}. Use --device cpu, or a torch built for CUDA"
            )
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ValueError(f"device {requested!r}: torch sees {torch.cuda.device_count()} CUDA device(s)")
    return device


def native_bfloat16(device: torch.device) -> bool:
    """Whether ``device`` computes in bfloat16 natively (not emulated, which is slower than float32).

    CPU: on x86, AVX512-BF16 or AMX (oneDNN's own check also says yes on AVX-512 without them, where
    it converts to float32 and back: no faster than float32, and less exact); elsewhere (ARM's
    BF16) oneDNN's check.  CUDA: compute capability 8.0 (Ampere) or later; the V100 (7.0) and T4
    (7.5) emulate it.
    """
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_capability(device) >= (8, 0)
    if device.type != "cpu":
        return False
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686"):
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


@contextlib.contextmanager
def arithmetic(tf32: bool = False) -> Iterator[None]:
    """cuDNN and cuBLAS as one network call needs them, put back afterwards (the switches are process-wide).

    ``tf32`` False: float32 means IEEE float32 (PyTorch's default lets cuDNN use TF32 on Ampere
    and later).  cuDNN picks deterministic algorithms without benchmarking, so a batch of one
    shape always takes the same algorithm.  No effect on a CPU.
    """
    cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
    saved = (cudnn.allow_tf32, matmul.allow_tf32, cudnn.deterministic, cudnn.benchmark)
    cudnn.allow_tf32, matmul.allow_tf32 = tf32, tf32
    cudnn.deterministic, cudnn.benchmark = True, False
    try:
        yield
    finally:
        cudnn.allow_tf32, matmul.allow_tf32, cudnn.deterministic, cudnn.benchmark = saved


def synchronize(device: Union[str, torch.device]) -> None:
    """Wait for the device's queued work (a CUDA device of any index); nothing on a CPU."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)


__all__ = ["arithmetic", "gpu_present", "gpus_allotted", "native_bfloat16", "resolve", "synchronize"]
