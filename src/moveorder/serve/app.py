"""The page's server: a FastAPI application over the one-position tool and a results folder.

The same input meets the same checks as ``moveorder infer``: a request becomes the command line's own
arguments (``parse``, :func:`moveorder.cli.search.infer_request`, given by the ``serve`` verb) and its
position a file in the job's folder, read by :func:`moveorder.search.inference.check_request` before it
is queued, so a refusal reads as the command line's, word for word, with the file's name where the
command line names its path.  Searches run one at a time (:class:`moveorder.serve.jobs.Worker`) on
networks loaded once.  Every request is bounded (:data:`moveorder.settings.SERVE_MAX_REQUEST`), every
page asset comes from the package, and only the runs of the given results folder can be read.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import shutil
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.middleware.trustedhost import TrustedHostMiddleware

from moveorder import __version__
from moveorder import settings as S
from moveorder.go import coords
from moveorder.report import diagram
from moveorder.report.answer import answer_lines, diagram_title, game_order
from moveorder.serve.jobs import Job, Networks, Worker
from moveorder.serve.runs import Results

log = logging.getLogger(__name__)

#: The page's files, served from the package: name -> media type.
ASSETS = {"index.html": "text/html", "app.js": "text/javascript", "style.css": "text/css"}
#: The answer's files the page offers: kind -> (file name's ending, media type).
DOWNLOADS = {"sgf": ("-ordered.sgf", "application/x-go-sgf"), "svg": ("-order.svg", "image/svg+xml")}
DOWNLOADS["png"] = ("-order.png", "image/png")
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; "
    "frame-ancestors 'none'",
}


class PositionIn(BaseModel):
    """A position as the page sends it: an SGF's text (the file loaded, or the stones placed on the board)."""

    model_config = ConfigDict(extra="forbid")
    sgf: str  # its size: the command line's check (read_position), within the request's limit
    name: str = Field("position.sgf", max_length=200)
    moves: Optional[int] = None
    prisoners: Optional[Tuple[int, int]] = None
    komi: Optional[float] = None


class AskIn(PositionIn):
    """A position and the search the page asks for: ``moveorder infer``'s player options."""

    quality: str = Field(S.DEFAULT_QUALITY, max_length=40)
    network: Optional[str] = Field(None, max_length=200)
    alternatives: int = 1


class Refused(Exception):
    """Bad input: the message the page shows, with its HTTP status."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def file_name(name: str) -> str:
    """The name a position file is written under: the page's file name without folders or odd characters."""
    base = re.sub(r"[^\w.\- ]", "_", name.replace("\\", "/").rsplit("/", 1)[-1]).strip(" .")
    return base[:100] or "position.sgf"


def figure_json(fig: diagram.Figure) -> Dict:
    """:func:`moveorder.report.diagram.figure_data` for the page: each stone and note with its GTP vertex."""

    def vertex(p):
        return coords.to_gtp(p, fig.size)

    return {
        "size": fig.size,
        "moves": fig.moves,
        "matching": fig.matching,
        "first_difference": fig.first_difference,
        "doubt": list(fig.doubt) if fig.doubt is not None else None,
        "stones": [
            {"point": vertex(s.point), "row": s.point[0], "col": s.point[1], "colour": s.colour}
            | {"number": s.number, "mismatch": s.mismatch, "doubt": s.doubt}
            for s in fig.stones
        ],
        "notes": [
            {"point": vertex(n.point), "numbers": list(n.numbers), "mismatch": n.mismatch, "text": n.text()}
            for n in fig.notes
        ],
    }


def create_app(
    parse: Callable[[List[str]], Tuple[object, S.SearchConfig]],
    networks: Sequence[str],
    default_network: str,
    results: Optional[Path] = None,
    hosts: Sequence[str] = ("127.0.0.1", "localhost", "[::1]"),
) -> FastAPI:
    """The application.  ``parse``: ``moveorder infer``'s arguments -> (options, search settings), refusing
    as the command line does; ``networks``: the names the page offers; ``results``: the results folder,
    if any; ``hosts``: the Host headers answered (so that another site's page in the browser cannot use
    a server on this machine); ``*``: any."""
    folder = Path(tempfile.mkdtemp(prefix="moveorder-serve-"))
    worker = Worker()
    loaded = Networks()
    runs = Results(results) if results is not None else None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        worker.close()  # as the server stops: the search running, if any, stopped; the answers' files removed
        shutil.rmtree(folder, ignore_errors=True)

    app = FastAPI(
        title="moveorder",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
    )
    app.state.worker, app.state.folder = worker, folder
    if "*" not in hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=[h.strip("[]") for h in hosts] + list(hosts))
    app.add_middleware(BodyLimit, limit=S.SERVE_MAX_REQUEST)

    @app.exception_handler(Refused)
    async def _refused(request: Request, err: Refused):
        return JSONResponse({"error": str(err)}, status_code=err.status, headers=HEADERS)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, err: RequestValidationError):
        parts = []
        for e in err.errors():
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "request"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        return JSONResponse({"error": "; ".join(parts)}, status_code=400, headers=HEADERS)

    def asset(name: str) -> Response:
        data = (resources.files("moveorder.serve") / "static" / name).read_bytes()
        return Response(data, media_type=ASSETS[name], headers=HEADERS | {"Cache-Control": "no-cache"})

    @app.get("/", include_in_schema=False)
    def index():
        return asset("index.html")

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str):
        if name not in ASSETS:
            raise Refused(f"{name}: no such file", 404)
        return asset(name)

    @app.get("/api/info")
    def info():
        return {
            "version": __version__,
            "networks": list(dict.fromkeys([default_network, *networks])),
            "network": default_network,
            "qualities": {name: text for name, (text, _) in S.QUALITIES.items()},
            "quality": S.DEFAULT_QUALITY,
            "limits": {
                "moves": S.MAX_MOVES,
                "sgf_bytes": S.MAX_SGF_BYTES,
                "alternatives": S.MAX_ALTERNATIVES,
                "request_bytes": S.SERVE_MAX_REQUEST,
                "queue": worker.queue_size,
            },
            "results": runs is not None,
        }

    def job_folder(body: PositionIn) -> Tuple[Path, Path]:
        """A new folder for a request, with its position written there under the page's file name."""
        try:
            data = body.sgf.encode("utf-8")
        except UnicodeEncodeError as err:  # a lone surrogate escaped in the JSON
            raise Refused(f"sgf: not text: {err.reason} at character {err.start}") from None
        where = Path(tempfile.mkdtemp(dir=folder))
        path = where / file_name(body.name)
        path.write_bytes(data)
        return where, path

    def refusal(err: Exception, where: Path) -> Refused:
        """The command line's message, with the file's name where it names the file's path."""
        text = str(err).replace(str(where) + os.sep, "")
        return Refused(text, 404 if isinstance(err, FileNotFoundError) else 400)

    def argv(body: AskIn, path: Path) -> List[str]:
        out = [str(path), "--quality", body.quality, "--alternatives", str(body.alternatives)]
        out += ["--network", body.network or default_network]
        if body.moves is not None:
            out += ["--moves", str(body.moves)]
        if body.prisoners is not None:
            out += ["--prisoners", *(str(x) for x in body.prisoners)]
        return out

    @app.post("/api/position")
    def position(body: PositionIn):
        """The stones of a loaded SGF (after ``moves`` for a record), or the command line's refusal."""
        from moveorder.search.inference import checked_position

        where, path = job_folder(body)
        try:
            pos, _ = checked_position(path, body.moves, body.prisoners)
            record = game_order(path, None)
        except (ValueError, OSError) as err:
            raise refusal(err, where) from None
        finally:
            shutil.rmtree(where, ignore_errors=True)
        return {
            "black": [coords.to_gtp(p) for p in pos.black],
            "white": [coords.to_gtp(p) for p in pos.white],
            "prisoners": list(pos.prisoners),
            "komi": pos.komi,
            "players": [pos.black_player, pos.white_player],
            "record_moves": len(record) if record else 0,
            "moves": body.moves if body.moves is not None else (len(record) if record else None),
        }

    @app.post("/api/jobs", status_code=202)
    def ask(body: AskIn):
        """Check the request as ``moveorder infer`` would, then queue its search; its id and place."""
        from moveorder.search.inference import check_request

        if body.network is not None and body.network not in networks and body.network != default_network:
            raise Refused(
                f"--network {body.network}: the page orders with the networks it offers: {', '.join(networks)}"
            )
        where, path = job_folder(body)
        try:
            args, cfg = parse(argv(body, path))
            _, problem, _ = check_request(
                path, where / "ordered.sgf", args.moves, cfg, args.prisoners, args.alternatives
            )
            if body.komi is not None:
                set_komi(path, body.komi)
        except (ValueError, OSError) as err:
            shutil.rmtree(where, ignore_errors=True)
            raise refusal(err, where) from None
        job = Job(worker.new_id(), where, lambda job: search(job, path, args, cfg))
        if cfg.method == "beam" and problem.capture_free:  # its network evaluations: about width x moves
            job.expected = cfg.beam_width * problem.moves
        try:
            place = worker.submit(job)
        except ValueError as err:
            shutil.rmtree(where, ignore_errors=True)
            raise Refused(str(err), 503) from None
        return {"job": job.id, "place": place}

    def search(job: Job, path: Path, args, cfg: S.SearchConfig) -> Dict:
        """The worker's part: ``moveorder infer``'s search and answer, on the loaded network."""
        from moveorder.nets.likelihood import evaluator_over, likelihood_of_options
        from moveorder.search.confidence import chance_line
        from moveorder.search.inference import infer_position

        def warm(network, cache_size):
            return network, evaluator_over(network, cache_size)

        key = (args.network, args.device, args.precision, args.max_batch, args.average_symmetries, args.legal_only)
        key += (args.cache_size,)
        # the network and its evaluator, kept: a position evaluated for one search is served from the
        # cache to the next (the network's own output, as a search's cache serves it within the search)
        network, positions = loaded.get(key, lambda: warm(likelihood_of_options(args), args.cache_size))

        def on_batch(k: int) -> None:
            job.check()
            job.evaluations += k

        network.on_batch = on_batch
        try:
            row = infer_position(
                path,
                job.folder / "ordered.sgf",
                args.moves,
                cfg,
                lambda: positions,
                args.network,
                args.precision,
                progress=job,
                prisoners=args.prisoners,
                alternatives=args.alternatives,
            )
        finally:
            network.on_batch = None
        actual = game_order(path, args.moves)
        stem = Path(path.name).stem
        head, tail = answer_lines(row, Path(stem + DOWNLOADS["sgf"][0]), args.alternatives, actual)
        doubt = diagram.doubtful_moves(row.get("move_chances"))
        figures = [
            figure_json(diagram.figure_data(o["moves"], actual, doubt=doubt if k == 0 else None))
            for k, o in enumerate(row["orders"])
        ]
        saved = {"title": diagram_title(path.name, row), "inferred": row["inferred"], "actual": actual, "doubt": doubt}
        (job.folder / "answer.json").write_text(json.dumps(saved))
        return {
            "order": coords.sgf_to_gtp(row["inferred"]),
            "lgm": row["lgm"],
            "lines": head + tail,
            "comparison": diagram.comparison_line(row["inferred"], actual) if actual else None,
            "chance": row["chance"],
            "confidence": chance_line(row),
            "move_chances": row["move_chances"],
            "uncertain": row["uncertain"],
            "doubt_legend": diagram.doubt_legend(),
            "orders": [
                {"lgm": o["lgm"], "relative": o["relative"], "log_likelihood": _finite(o["log_likelihood"])}
                | {"order": coords.sgf_to_gtp(o["moves"]), "figure": f}
                for o, f in zip(row["orders"], figures)
            ],
            "actual": figure_json(diagram.figure_data(actual, actual)) if actual else None,
            "name": stem,
            "seconds": round(time.monotonic() - job.started, 3),
        }

    def job_of(job_id: str) -> Job:
        job = worker.get(job_id)
        if job is None:
            raise Refused(f"no search {job_id!r} (finished searches are kept for a while, then forgotten)", 404)
        return job

    @app.get("/api/jobs/{job_id}")
    def status(job_id: str):
        job = job_of(job_id)
        out = {"job": job.id, "state": job.state, "place": worker.place(job), "fraction": round(job.fraction, 4)}
        if job.state == "done":
            out["answer"] = job.answer
        if job.error:
            out["error"] = job.error
        return out

    @app.delete("/api/jobs/{job_id}")
    def cancel(job_id: str):
        job = job_of(job_id)
        worker.cancel(job)
        return {"job": job.id, "state": job.state}

    @app.get("/api/jobs/{job_id}/{kind}")
    def download(job_id: str, kind: str):
        """The answer's files: the SGF (its variations too), and the diagram as SVG or PNG, drawn as
        ``moveorder infer --diagram`` draws it."""
        job = job_of(job_id)
        if kind not in DOWNLOADS:
            raise Refused(f"{kind}: no such file (sgf, svg or png)", 404)
        if job.state != "done":
            raise Refused(f"search {job.id} is {job.state}: it has no answer", 409)
        ending, media = DOWNLOADS[kind]
        path = job.folder / ("ordered.sgf" if kind == "sgf" else f"order.{kind}")
        if not path.exists():
            saved = json.loads((job.folder / "answer.json").read_text())
            fig = diagram.figure_data(saved["inferred"], saved["actual"], doubt=saved.get("doubt"))
            diagram.save(fig, path, title=saved["title"])
        name = job.answer["name"] + ending
        return FileResponse(path, media_type=media, filename=name, headers=HEADERS)

    @app.get("/api/runs")
    def list_runs():
        if runs is None:
            raise Refused("no results folder: start the server with --results FOLDER", 404)
        return {"folder": str(runs.folder), "runs": runs.runs()}

    @app.get("/api/runs/table")
    def run_table(run: str = ""):
        if runs is None:
            raise Refused("no results folder: start the server with --results FOLDER", 404)
        try:
            return runs.table(run)
        except ValueError as err:
            raise Refused(str(err), 404) from None

    @app.get("/api/runs/boards")
    def run_boards(run: str = "", id: str = ""):
        """One arrangement of a run: the inferred and the actual order, as two figures."""
        table = run_table(run)
        row = next((r for r in table["rows"] if r["id"] == id), None)
        if row is None:
            raise Refused(f"{run}: no arrangement {id!r}", 404)
        try:
            inferred = figure_json(diagram.figure_data(row["inferred"], row["actual"])) if row["found"] else None
            actual = figure_json(diagram.figure_data(row["actual"], row["actual"]))
        except ValueError as err:
            raise Refused(f"{run}, {id}: {err}", 400) from None
        return {"row": row, "inferred": inferred, "actual": actual}

    return app


def set_komi(path: Path, komi: float) -> None:
    """Write ``komi`` into the position file's root (KM), as the answer's SGF keeps it."""
    from sgfmill import sgf

    if not math.isfinite(komi) or abs(komi) > 1000:
        raise ValueError(f"komi {komi}: expected a number of points, such as 6.5 or 7.5")
    try:
        game = sgf.Sgf_game.from_bytes(path.read_bytes())
    except ValueError as err:
        raise ValueError(f"{path}: the komi cannot be set in this file: {err}") from None
    game.get_root().set("KM", float(komi))
    path.write_bytes(game.serialise())


def _finite(x) -> Optional[float]:
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is answered 413 before any of it is used."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            return await self._too_large(send)
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                return await self._too_large(send)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)

    async def _too_large(self, send):
        text = json.dumps(
            {"error": f"request larger than {self.limit:,} bytes (an SGF is at most {S.MAX_SGF_BYTES:,} bytes)"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(text)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": text})


def loopback(host: str) -> bool:
    """Whether ``host`` is this machine alone (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_page(
    parse: Callable[[List[str]], Tuple[object, S.SearchConfig]],
    networks: Sequence[str],
    default_network: str,
    results: Optional[Path],
    host: str,
    port: int,
) -> None:
    """``moveorder serve``: the application (:func:`create_app`) on ``host``:``port``, warned of when
    ``host`` lets other machines in."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port {port}: must be from 0 to 65535")
    if not loopback(host):
        log.warning("--host %s: the page and its searches are open to every machine that reaches this one", host)
    hosts = ("127.0.0.1", "localhost", "[::1]") if loopback(host) else ("*",)
    serve(create_app(parse, networks, default_network, results, hosts), host, port)


def serve(app: FastAPI, host: str, port: int) -> None:
    """Run ``app`` on uvicorn at ``host``:``port`` (0: a free port), printing the page's address first."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise OSError(f"--host {host} --port {port}: cannot listen there: {err.strerror or err}") from None
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"moveorder: the page is at http://{shown}:{sock.getsockname()[1]}/  (Ctrl+C stops the server)", flush=True)
    config = uvicorn.Config(app, log_level="warning", limit_concurrency=64, timeout_keep_alive=5, access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
