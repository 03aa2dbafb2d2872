"""Feed a recorded MCP session (examples/transcripts/*.jsonl) through lowdown-core's `classify`
state machine, via `prowl._native`, and print one interaction record per line:
    .venv/bin/python examples/python/classify_transcript.py [transcript.jsonl]
"""

import json
import sys
from pathlib import Path

from prowl._native import Classifier, build_record, canonical_json

DEFAULT = Path(__file__).resolve().parent.parent / "transcripts" / "server-everything.jsonl"
path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
# Who records, for what. The transcript holds no command line, so the target is fixed.
context = {"actor": "example", "target": "npm:@modelcontextprotocol/server-everything", "node_id": None}
classifier = Classifier()
recorded = 0


def show(exchanges: list) -> None:
    global recorded
    for exchange in exchanges:
        # The facts learnt so far (server version, schema hash) go into each record; ids
        # "example-0", "example-1", ... as the other hosts' Recorder gives them.
        record = build_record(exchange, classifier.facts(), context, f"example-{recorded:x}")
        # None: a server->client request (sampling, roots/list) is relayed, never recorded.
        # canonical_json sorts the keys and writes numbers the same way in every host.
        if record is not None:
            recorded += 1
            print(canonical_json(json.dumps(record).encode()))


last_ms = 0.0
for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
    if not text.strip():
        continue
    try:
        entry = json.loads(text)
        show(classifier.feed(entry["direction"], (entry["line"] + "\n").encode(), entry["at_ms"]))
    except (ValueError, KeyError, TypeError) as e:  # prowl's LowdownError is a ValueError
        sys.exit(f"{path}:{number}: {e}")
    last_ms = entry["at_ms"]
# End of session: the recorded client closed its side, so anything still pending was given
# up by the client (cancelled), not failed by the server.
show(classifier.close(last_ms, "client_ended"))
