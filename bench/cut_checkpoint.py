"""A training run cut before its end (a lease's timeout): its last checkpoint's weights as a model.pt.

    python bench/cut_checkpoint.py RUN_DIR/checkpoint.pt OUT.pt

Used by bench/gpu_finetune.sh and bench/gpu_captures.sh; the model.pt is what ``load_policy`` reads,
its metrics ``{"step": N, "cut": true}``.
"""

import sys

import torch

from moveorder.nets.networks import LeelaNet, save_checkpoint


def main(checkpoint: str, out: str) -> int:
    s = torch.load(checkpoint, weights_only=False, map_location="cpu")
    net = LeelaNet(s["config"]["blocks"], s["config"]["filters"])
    net.load_state_dict(s["model"])
    save_checkpoint(net, out, {"step": s["step"], "cut": True})
    print("cut: the checkpoint of step", s["step"])
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
