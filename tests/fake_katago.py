"""A stand-in for `katago analysis` for protocol-layer tests only: it answers out of order, warns,
errors on request, can die once (or close its input and linger), or stay silent. The real engine is tested in test_katago.py.

Mode ``share DIR N`` holds its first analysis until N processes of a pool (each leaving its pid in
DIR) have a query, so a pool's test sees the work shared out however its threads are scheduled."""

import json
import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
marker = sys.argv[2] if len(sys.argv) > 2 else ""
pending = []
cleared = False  # a clear_cache since the last query: every reply says so, for the pool's test
for line in sys.stdin:
    q = json.loads(line)
    if mode == "silent":
        continue
    if "action" in q:
        cleared = q["action"] == "clear_cache"
        print(json.dumps({"id": q["id"], "action": q["action"]}), flush=True)
        continue
    if q["id"] == "bad":
        print(json.dumps({"id": "bad", "error": "Could not parse komi", "field": "komi"}), flush=True)
        continue
    if q["id"] == "warn":
        print(json.dumps({"id": "warn", "warning": "Unexpected field", "field": "foo"}), flush=True)
    if mode == "share" and marker:
        open(os.path.join(marker, str(os.getpid())), "w").close()
        # Past the deadline, answer anyway: the pool's assertion then fails. Far above what a loaded machine
        # needs (the other processes normally have a query at once), below the test client's 300 s.
        deadline = time.monotonic() + 240
        while len(os.listdir(marker)) < int(sys.argv[3]) and time.monotonic() < deadline:
            time.sleep(0.01)
        marker = ""  # only the first query waits
    if mode == "hangup-once" and not os.path.exists(marker):  # closes its input, then lingers: poll() says alive
        open(marker, "w").close()
        # Input closed before the reply: the client's next write can only break the pipe (closed after
        # it, a write in between would sit in a pipe no one reads, and the client would wait its timeout).
        os.close(0)
        t = q["analyzeTurns"][0]
        print(json.dumps({"id": q["id"], "turnNumber": t, "rootInfo": {"scoreLead": float(t)}}), flush=True)
        time.sleep(60)
        os._exit(3)
    if mode == "die-once" and not os.path.exists(marker):
        open(marker, "w").close()
        t = q["analyzeTurns"][0]
        print(json.dumps({"id": q["id"], "turnNumber": t, "rootInfo": {"scoreLead": float(t)}}), flush=True)
        os._exit(3)
    for t in reversed(q["analyzeTurns"]):  # out of order on purpose
        print(
            json.dumps(
                {
                    "id": q["id"],
                    "turnNumber": t,
                    "rootInfo": {"scoreLead": float(t)},
                    "cleared": cleared,
                    "pid": os.getpid(),
                    "moveInfos": [{"move": "D4", "scoreLead": float(t) + 1, "order": 0}],
                }
            ),
            flush=True,
        )
    cleared = False
