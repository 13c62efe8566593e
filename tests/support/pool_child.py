"""A worker child for tests of :class:`wildtoolbench.runner.child_pool.ChildPool`
(``python -m tests.support.pool_child``): it answers ``{"n": k, "value": 2 * x}`` to ``{"n": k, "x": x}``,
exits with status 3 on ``{"die": true}``, answers a line that is not JSON on ``{"garble": true}``
and never answers ``{"hold": true}``."""

from __future__ import annotations

import json
import sys


def main() -> None:
    """Read the header, then answer each request line as the module doc says."""
    sys.stdin.readline()  # the header
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("die"):
            sys.exit(3)
        if request.get("hold"):
            continue
        answer = (
            b"not json\n"
            if request.get("garble")
            else json.dumps({"n": request["n"], "value": 2 * request["x"]}).encode() + b"\n"
        )
        sys.stdout.buffer.write(answer)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
