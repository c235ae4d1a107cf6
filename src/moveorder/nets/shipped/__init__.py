"""The policy networks that come with the package, by name.

A shipped network is a Leela Zero weights file in this folder, ``NAME.txt.gz``
(at most 10 MB), beside ``NAME.json``: its held-out metrics and how it was made
(the exact command, the configuration, the commit, the machine and wall time).
A name stands wherever a network file does: ``--network tygem`` on the command
line, ``policy.network: tygem`` in a workflow configuration.  The one-position
tool uses :data:`moveorder.settings.SHIPPED_NETWORK` when no network is given,
so a fresh install answers "how was this played?" with no download.

=======================  =====================================================
name                     what it is
=======================  =====================================================
``tygem``                4 blocks x 32 filters, trained only on Tygem 9d-vs-9d
                         games (the source of Leela Zero's ``best_v1``), so no
                         Fox pro or KGS game the pipeline evaluates is in its
                         training data (``config/tygem.yaml``, two hours on a
                         2-core CPU): cheap on a CPU; the workflow's CPU
                         configurations fine-tune it
``tygem-6x128``          Leela Zero's shape (6 x 128, like ``best_v1``), trained
                         on the same Tygem games on a GPU
                         (``config/tygem-gpu.yaml``, then further stages;
                         ``tygem-6x128.json`` records each): about 10 points
                         more top-1 on every level, at about 24 times the
                         arithmetic of ``tygem`` per position; the default
=======================  =====================================================
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Union

HERE = Path(__file__).resolve().parent
SUFFIX = ".txt.gz"


def names() -> List[str]:
    """The shipped networks' names, sorted."""
    return sorted(p.name[: -len(SUFFIX)] for p in HERE.glob("*" + SUFFIX))


def weights(name: str) -> Path:
    """The weights file of the shipped network ``name``; an error listing the names if there is none."""
    path = HERE / (name + SUFFIX)
    if not path.is_file():
        raise ValueError(f"no shipped network named {name!r}; shipped: {', '.join(names()) or 'none'}")
    return path


def info(name: str) -> Dict[str, object]:
    """What ``NAME.json`` says of the shipped network ``name``: its metrics and how it was made."""
    return json.loads((HERE / f"{name}.json").read_text())


def resolve(spec: Union[str, Path]) -> Path:
    """A network as given (a shipped name or a path) -> its file.

    A name of a shipped network wins only when no file of that name exists
    here, so a user's own file called ``tygem`` is still read as a file.
    """
    path = Path(spec)
    if not path.exists() and str(spec) in names():
        return weights(str(spec))
    return path


def require(spec: Union[str, Path]) -> Path:
    """:func:`resolve`, refusing a network that is neither a file nor a shipped name: FileNotFoundError
    naming what was given and the shipped networks."""
    path = resolve(spec)
    if path.is_file():
        return path
    what = "is a folder" if path.is_dir() else "no such network file"
    raise FileNotFoundError(
        f"{str(spec)!r}: {what}, and no network of that name is shipped with moveorder (shipped: "
        f"{', '.join(names()) or 'none'}); give a shipped name, or the path of Leela Zero weights "
        "(.txt/.gz/.zip) or of a moveorder .pt"
    )
