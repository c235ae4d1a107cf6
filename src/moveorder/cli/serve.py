"""The page's verb, serve: a local web page over ``moveorder infer`` and a results folder."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from moveorder import settings as S
from moveorder.cli.common import verb
from moveorder.cli.search import _check_network, infer_request
from moveorder.nets import shipped

log = logging.getLogger("moveorder")


def _serve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default=S.SERVE_HOST,
        help="the address to listen on; another than this machine's (127.0.0.1, ::1) lets other machines "
        "use the page and its searches, and is warned of (default: %(default)s)",
    )
    parser.add_argument("--port", type=int, default=S.SERVE_PORT, help="0: a free port (default: %(default)s)")
    parser.add_argument(
        "--results",
        default=None,
        help="a results folder of the pipeline (results/): the page lists its inference runs; "
        "no file outside it is read; default: none",
    )
    parser.add_argument(
        "--network",
        default=S.SHIPPED_NETWORK,
        help=f"the page's default network: a shipped one ({', '.join(shipped.names())}), or a file, offered "
        "beside the shipped ones (default: %(default)s)",
    )
    parser.add_argument(
        "--precision",
        choices=(*S.PRECISIONS, "auto"),
        default=S.PLAYER_PRECISION,
        help="the network's arithmetic for every search, as moveorder infer's --precision; auto: bfloat16 where "
        "the device computes it natively, else float32 (default: %(default)s)",
    )


@verb("serve", "a page to ask and look at: a position's order, and a results folder's runs", _serve_options)
def cmd_serve(args: argparse.Namespace) -> int:
    from moveorder.serve.app import serve_page

    _check_network(args.network)
    results = Path(args.results) if args.results else None
    parse = lambda argv: infer_request([*argv, "--precision", args.precision])  # noqa: E731
    serve_page(parse, shipped.names(), args.network, results, args.host, args.port)
    return 0
