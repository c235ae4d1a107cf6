"""Training a human-move policy network (Leela Zero architecture) on a training pool.

The pool is a JSONL file of records (:mod:`moveorder.data.records`), written by
the data stage with every evaluation game left out: every record usable for
training, handicap games (their setup stones are the first board) and games
with captures and passes included.  Games are split into train and held-out
by a hash of each game's id and the seed (:func:`moveorder.nets.sampling.split_games`), so whether a
game is held out depends on that game alone.  Every position of a training
game is a sample (the planes of :func:`moveorder.nets.features.board_history_planes`,
built for a whole batch at once by :class:`moveorder.nets.sampling.PositionSampler`; optionally one
of the 8 symmetries drawn per sample), the policy target is the move played
and, with the value head on, the value target is the game's result from the
side to move (games with no result train the policy only).  A pool packed by
``moveorder pack-pool`` (``.npz``, :mod:`moveorder.nets.packed`) gives the same
positions, planes and network, its batches made on the training device
(:func:`moveorder.nets.sampling.samplers`).  Loss =
cross-entropy + ``value_weight`` x MSE.  The learning rate warms up linearly
and decays along a cosine over the configured steps (:func:`lr_factor`).
With ``init``, training starts from another network's weights instead of
random ones (:func:`start_from`): pre-trained on Tygem 9d, fine-tuned on a
level's own pool.  With ``max_move``, only the positions before that move of each game are
trained on and held out: the opening, whose orders the inference asks about.

Checkpoints (model, optimiser, step, RNG states) are written every
``checkpoint_every`` steps and at the end; a rerun resumes from the last
one, on any device (:func:`resume`).  The forward pass runs under bfloat16
autocast on a GPU and on a CPU with native bfloat16 (``precision``,
:func:`autocast_dtype`).

On a GPU: float32 is IEEE float32 (no TF32) and cuDNN's
algorithms are deterministic, in training and in :func:`moveorder.nets.sampling.evaluate`
(:func:`moveorder.nets.devices.arithmetic`); batches are assembled on a thread
ahead of the step (:class:`moveorder.nets.sampling.Prefetch`), in pinned memory, and copied without
waiting; the step itself never waits for the GPU.  The data path is the
same on both devices: the same seed draws the same batches.  On a CPU, one
thread (``threads``) gives the same bytes run to run; with two, one run in
eight measured gave other bytes from the same batches (docs/testing.md).
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Dict, Optional

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from moveorder.nets import devices, shipped
from moveorder.nets.networks import LeelaNet, export_leela, load_policy, parameter_count, save_checkpoint
from moveorder.nets.sampling import PositionSampler, Prefetch, evaluate, samplers, training_batches
from moveorder.settings import LR_SCHEDULES, TRAIN_PRECISIONS, TrainConfig

log = logging.getLogger(__name__)


def lr_factor(step: int, steps: int, warmup_steps: int, schedule: str = "cosine") -> float:
    """The multiplier of the base learning rate at optimiser step ``step`` (0-based) of ``steps``.

    A linear warm-up, ``(step + 1) / warmup_steps`` up to 1, times a cosine
    from 1 at step 0 to 0 at step ``steps`` (``"cosine"``) or 1 (``"constant"``).
    """
    if schedule not in LR_SCHEDULES:
        raise ValueError(f"learning-rate schedule {schedule!r}: not one of {LR_SCHEDULES}")
    warm = min(1.0, (step + 1) / warmup_steps) if warmup_steps > 0 else 1.0
    if schedule == "constant":
        return warm
    return warm * 0.5 * (1 + math.cos(math.pi * min(step, steps) / steps))


def autocast_dtype(precision: str, device: torch.device) -> Optional[torch.dtype]:
    """The autocast type of training's forward pass: None (float32) or bfloat16.

    ``auto``: bfloat16 where the device has it natively (:func:`moveorder.nets.devices.native_bfloat16`):
    a GPU from Ampere on (a V100 or T4 emulates it, slower than float32), a CPU whose oneDNN has
    AVX512-BF16 or AMX (1.6x more steps per second for 4x32 on this project's CPU,
    docs/benchmarks.md); float32 elsewhere.  Weights, the optimiser and evaluation stay float32.
    """
    if precision not in TRAIN_PRECISIONS:
        raise ValueError(f"precision {precision!r}: not one of {TRAIN_PRECISIONS}")
    if precision == "float32":
        return None
    if precision == "bfloat16":
        return torch.bfloat16
    return torch.bfloat16 if devices.native_bfloat16(device) else None


def value_loss(value: torch.Tensor, target: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
    """Mean squared error of the value head over the samples ``known`` (indices, from the host) with a result.

    The same numbers, bit for bit, as the mean over a boolean mask ``target != 0``, without the host sync a mask
    costs on a GPU (the size of its result); 0 for a batch with no known result.
    """
    if not len(known):
        return torch.zeros((), device=value.device)
    return ((value.float() - target) ** 2).index_select(0, known).mean()


def resume(
    ckpt: Path,
    cfg: TrainConfig,
    net: nn.Module,
    opt: torch.optim.Optimizer,
    sched,
    rng: np.random.Generator,
    dev: torch.device,
) -> int:
    """Load a checkpoint into the network, optimiser, scheduler and RNGs; return its step.

    The checkpoint is read onto the CPU whatever ``dev`` is: torch's RNG state must be a CPU byte
    tensor, and AdamW (neither fused nor capturable) wants its ``step`` counters on the CPU (on a GPU
    it would read each back every step: a host sync per parameter).  ``load_state_dict`` moves the
    weights and moments to their parameters' device.
    """
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    if _model_settings(state["config"]) != _model_settings(asdict(cfg)):
        raise ValueError(f"{ckpt}: checkpoint was made with another configuration; remove it to start over")
    net.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    rng.bit_generator.state = state["rng"]
    torch.set_rng_state(state["torch_rng"])
    if dev.type == "cuda" and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"], dev)
    return state["step"]


def start_from(net: LeelaNet, network: str, planes: torch.Tensor) -> None:
    """Copy the weights of ``network`` (a shipped name, Leela Zero weights or a model.pt) into ``net``.

    Leela Zero's files fold each batch norm's learned shift into its mean, which training mode
    would throw away (it normalises with the batch's own mean).  So each batch norm is
    re-expressed around the mean its convolution actually has on ``planes`` (positions of the
    pool): mean := the observed mean m, shift := (m - file mean) / std.  The network in eval mode
    computes exactly what the file does, and in training mode it starts near it.  A network of
    another shape is refused, naming it.
    """
    start = load_policy(network)
    if (start.blocks_n, start.filters) != (net.blocks_n, net.filters):
        raise ValueError(
            f"{shipped.resolve(network)}: a {start.blocks_n}x{start.filters} network cannot start the training of a "
            f"{net.blocks_n}x{net.filters} one (set blocks and filters to its shape)"
        )
    layers = [*start.conv_layers(), start.policy_conv, start.value_conv]
    means = {}
    hooks = [
        layer.conv.register_forward_hook(lambda m, i, o, k=k: means.__setitem__(k, o.double().mean((0, 2, 3))))
        for k, layer in enumerate(layers)
    ]
    with torch.no_grad():
        start(planes)
        for hook in hooks:
            hook.remove()
        for k, layer in enumerate(layers):
            bn = layer.bn
            std = torch.sqrt(bn.running_var.double() + bn.eps)
            shift = bn.bias.double() + (means[k] - bn.running_mean.double()) / std
            bn.bias.copy_(shift.float())
            bn.running_mean.copy_(means[k].float())
    net.load_state_dict(start.state_dict())


def train(
    pool: Path, out_dir: Path, cfg: TrainConfig, device: Optional[str] = None, progress: bool = True
) -> Dict[str, object]:
    """Train on ``pool``; write ``model.pt``, ``policy.txt.gz`` (Leela Zero format) and ``metrics.json``.

    The metrics: held-out top-1 accuracy and mean log-likelihood of the
    played move (:func:`evaluate`), counts of games and positions, and where
    the time went (``seconds``: replaying the games, assembling batches,
    forward/backward/update, evaluation; ``data_share``: the share of the
    training steps' time spent outside forward/backward/update).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    lr_factor(0, cfg.steps, cfg.warmup_steps, cfg.lr_schedule)  # reject an unknown schedule before any work
    dev = devices.resolve(device)
    amp = autocast_dtype(cfg.precision, dev)
    if dev.type == "cuda":  # cuBLAS is deterministic only with a fixed workspace (read when it starts)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.manual_seed(cfg.seed)
    train_s, held_s, seconds = _read_pool(pool, cfg, dev)
    net, opt, sched = _model_and_optimiser(cfg, dev)
    rng = np.random.default_rng([cfg.seed, 3])
    step = 0
    ckpt = out_dir / "checkpoint.pt"
    if ckpt.exists():
        step = resume(ckpt, cfg, net, opt, sched, rng, dev)
        log.info("resuming from %s at step %d", ckpt, step)
    elif cfg.init:
        sample = np.random.default_rng([cfg.seed, 5]).integers(0, len(train_s), 1024)
        start_from(net, cfg.init, train_s.batch(sample, None)[0].cpu())
        log.info("starting from the weights of %s", cfg.init)

    gpu = dev.type == "cuda"
    batches = training_batches(train_s, rng, cfg.batch_size, cfg.symmetries)
    on_host = isinstance(train_s, PositionSampler)  # a packed pool's batches are made on the device itself
    if gpu and on_host:  # made ahead on a thread; on a CPU that thread would take the cores the step uses
        batches = Prefetch(batches, depth=2, pin=True)
    ce = nn.CrossEntropyLoss()
    forward = net if cfg.value_head else net.policy_logits
    net.train()
    bar = tqdm(total=cfg.steps, initial=step, disable=not progress, desc="train", mininterval=5)
    start_step = step
    try:
        # The step never waits for the GPU: no sync, no mask, no read-back but the progress bar's (every
        # 100 steps); on a CPU the clock then reads finished work, on a GPU queued work, and the wait
        # for the queue is added at the end.
        with devices.arithmetic(tf32=False):
            while step < cfg.steps:
                t_data = time.perf_counter()
                (x, target, result, known), rng_state = next(batches)
                x = x.to(dev, non_blocking=gpu).contiguous(memory_format=torch.channels_last)
                target, result, known = (v.to(dev, non_blocking=gpu) for v in (target, result, known))
                t_compute = time.perf_counter()
                logits, p_loss, loss = _losses(forward, ce, (x, target, result, known), cfg, amp, dev)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                step += 1
                t_end = time.perf_counter()
                seconds["data"] += t_compute - t_data
                seconds["compute"] += t_end - t_compute
                if progress and (step % 100 == 0 or step == cfg.steps):
                    acc = float((logits.argmax(-1) == target).float().mean())
                    bar.set_postfix(loss=f"{p_loss.item():.3f}", acc=f"{acc:.3f}", refresh=False)
                bar.update(1)
                if step % cfg.checkpoint_every == 0 or step == cfg.steps:
                    _save(ckpt, cfg, (net, opt, sched), rng_state, dev, step)
            t_wait = time.perf_counter()
            devices.synchronize(dev)
            seconds["compute"] += time.perf_counter() - t_wait
    finally:
        if gpu and on_host:
            batches.close()
    bar.close()
    return _finish(net, out_dir, pool, cfg, (train_s, held_s), dev, amp, seconds, step - start_step)


def _read_pool(pool: Path, cfg: TrainConfig, dev: torch.device):
    """The train and held-out samplers of ``pool``, and the seconds table with the replay's time."""
    t0 = time.perf_counter()
    train_s, held_s = samplers(pool, cfg.heldout_fraction, cfg.seed, dev, cfg.max_move)
    seconds = {"replay": time.perf_counter() - t0, "data": 0.0, "compute": 0.0}
    log.info(
        "%s: %d train games (%d positions), %d held-out games (%d positions), read in %.1f s",
        pool,
        train_s.games,
        len(train_s),
        held_s.games,
        len(held_s),
        seconds["replay"],
    )
    return train_s, held_s, seconds


def _model_and_optimiser(cfg: TrainConfig, dev: torch.device):
    """A new network (channels-last), AdamW over its trained parameters (the value head's only with
    ``value_head``), and the learning-rate schedule."""
    # Channels-last: 1.13x more training steps per second for 4x32 on a CPU (bench/networks.py).
    net = LeelaNet(cfg.blocks, cfg.filters).to(dev, memory_format=torch.channels_last)
    value_params = {id(p) for m in (net.value_conv, net.value_fc1, net.value_fc2) for p in m.parameters()}
    params = [p for p in net.parameters() if p.requires_grad and (cfg.value_head or id(p) not in value_params)]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfg.steps, cfg.warmup_steps, cfg.lr_schedule))
    return net, opt, sched


def _save(ckpt: Path, cfg: TrainConfig, state, rng_state: dict, dev: torch.device, step: int) -> None:
    """A checkpoint of the network, optimiser and schedule (``state``) and the RNGs, renamed into place."""
    net, opt, sched = state
    tmp = ckpt.with_suffix(".tmp")
    torch.save(
        {
            "config": asdict(cfg),
            "model": net.state_dict(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "rng": rng_state,
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state(dev) if dev.type == "cuda" else None,
            "step": step,
        },
        tmp,
    )
    tmp.replace(ckpt)


def _losses(forward, ce, batch, cfg: TrainConfig, amp, dev: torch.device):
    """The logits, the policy loss and the training loss (the value head's added) of one batch, under
    autocast where ``amp`` names a dtype."""
    x, target, result, known = batch
    with torch.autocast(dev.type, dtype=amp or torch.bfloat16, enabled=amp is not None):
        if cfg.value_head:
            logits, value = forward(x)
        else:
            logits = forward(x)
        p_loss = ce(logits.float(), target)
        loss = p_loss
        if cfg.value_head:
            loss = p_loss + cfg.value_weight * value_loss(value, result, known)
    return logits, p_loss, loss


def _finish(net, out_dir: Path, pool: Path, cfg: TrainConfig, sets, dev, amp, seconds: dict, steps_done: int) -> dict:
    """Evaluate the trained network on the held-out positions and write ``model.pt``, ``policy.txt.gz``
    and ``metrics.json``; the metrics are returned."""
    train_s, held_s = sets
    elapsed = seconds["data"] + seconds["compute"]
    t0 = time.perf_counter()
    metrics = evaluate(net, held_s, cfg.heldout_positions, dev, cfg.seed)
    seconds["evaluate"] = time.perf_counter() - t0
    metrics.update(
        {
            "pool": str(pool),
            "train_games": train_s.games,
            "heldout_games": held_s.games,
            "train_positions": len(train_s),
            "heldout_positions_available": len(held_s),
            "steps": cfg.steps,
            "parameters": parameter_count(net),
            "device": dev.type,
            "precision": "bfloat16" if amp else "float32",
            "steps_per_second": steps_done / elapsed if elapsed else None,
            "seconds": {k: round(v, 2) for k, v in seconds.items()},
            "data_share": seconds["data"] / elapsed if elapsed else None,
            "config": asdict(cfg),
        }
    )
    net.eval().cpu()
    save_checkpoint(net, out_dir / "model.pt", metrics)
    export_leela(net, out_dir / "policy.txt.gz")
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    log.info(
        "held-out: top-1 %.3f, mean log-likelihood %.3f over %d positions; %.1f%% of step time assembling batches",
        metrics["top1_accuracy"],
        metrics["mean_log_likelihood"],
        metrics["positions"],
        100 * (metrics["data_share"] or 0),
    )
    return metrics


def _model_settings(cfg: dict) -> dict:
    """The settings a checkpoint must agree on to be resumed (threads and checkpoint cadence may change, and
    ``compile``, a setting of older checkpoints, changed no weight; a checkpoint written before ``max_move``
    existed trained on every position)."""
    return {k: v for k, v in {"max_move": 0, **cfg}.items() if k not in ("threads", "checkpoint_every", "compile")}
