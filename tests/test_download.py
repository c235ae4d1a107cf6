"""The download step against a real HTTP server on loopback, and the offline mirror."""

import hashlib
import http.server
import threading

import pytest

from helpers import MIRROR
from moveorder.data.download import ChecksumError, fetch, mirror_path, sha256_of

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB


class Handler(http.server.BaseHTTPRequestHandler):
    """Serves PAYLOAD with Range support; the first full GET breaks off half-way."""

    calls = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        Handler.calls.append(self.headers.get("Range"))
        if self.path == "/missing":
            self.send_error(404)
            return
        start = 0
        rng = self.headers.get("Range")
        if rng:
            start = int(rng.split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(PAYLOAD) - 1}/{len(PAYLOAD)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(PAYLOAD) - start))
        self.end_headers()
        if len(Handler.calls) == 1:  # drop the connection after half the bytes
            self.wfile.write(PAYLOAD[start : len(PAYLOAD) // 2])
            self.wfile.flush()
            self.connection.close()
            return
        self.wfile.write(PAYLOAD[start:])


@pytest.fixture
def server():
    Handler.calls = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_resume_after_broken_connection(server, tmp_path):
    sha = hashlib.sha256(PAYLOAD).hexdigest()
    dest = fetch(server + "/file.bin", tmp_path / "file.bin", sha256=sha, backoff=0.01, quiet=True)
    assert dest.read_bytes() == PAYLOAD
    # First try without Range, then a resume from where the first stopped.
    assert Handler.calls[0] is None and Handler.calls[1] == f"bytes={len(PAYLOAD) // 2}-"
    assert not (tmp_path / "file.bin.part").exists()


def test_http_404_is_not_retried(server, tmp_path):
    with pytest.raises(RuntimeError, match="missing.*1 tries"):
        fetch(server + "/missing", tmp_path / "m", backoff=0.01, quiet=True)


def test_sha_mismatch_names_file_and_hashes(server, tmp_path):
    wrong = "0" * 64
    with pytest.raises(ChecksumError) as err:
        fetch(server + "/file.bin", tmp_path / "file.bin", sha256=wrong, backoff=0.01, quiet=True)
    msg = str(err.value)
    assert "file.bin" in msg and wrong in msg and hashlib.sha256(PAYLOAD).hexdigest() in msg
    assert not (tmp_path / "file.bin").exists() and not (tmp_path / "file.bin.part").exists()


def test_no_sha_records_actual(server, tmp_path):
    fetch(server + "/x.bin", tmp_path / "x.bin", backoff=0.01, quiet=True)
    assert (tmp_path / "x.bin.sha256").read_text().split()[0] == hashlib.sha256(PAYLOAD).hexdigest()


def test_mirror_layout_and_fetch(tmp_path):
    url = "https://github.com/featurecat/go-dataset/raw/master/Pro/Pro2.7z"
    assert mirror_path(url, MIRROR) == MIRROR / "github.com/featurecat/go-dataset/raw/master/Pro/Pro2.7z"
    sha = "53d01b27a7ce51e201bb965efe35708d634d57c4d42f195cdbdee539ff564b88"
    dest = fetch(url, tmp_path / "Pro2.7z", sha256=sha, mirror=MIRROR, quiet=True)
    assert sha256_of(dest) == sha
    with pytest.raises(FileNotFoundError, match="not in the mirror"):
        fetch("https://example.org/none.7z", tmp_path / "none.7z", mirror=MIRROR, quiet=True)
    with pytest.raises(ValueError, match=r"\.\."):
        mirror_path("https://host/a/../../etc/passwd", MIRROR)
