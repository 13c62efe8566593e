"""Entry point of the llama.cpp server child process (run by file path, not imported by the project).

Usage: ``python _child.py PARENT_PID --model PATH --alias NAME --port PORT [options...]``
(the options of :func:`parse_args`; :class:`wildtoolbench.models.llama.server.LocalServer` builds the line).

1. A watchdog thread exits this process as soon as its parent is gone, so a server never
   outlives the run that started it (even when that run was killed with SIGKILL).
2. llama.cpp's C++ server (``xllamacpp.Server``, a prebuilt wheel) loads the model (its compute
   threads waiting passively, :data:`PASSIVE`) and serves the OpenAI-compatible API on
   ``127.0.0.1:PORT`` from its own threads; this thread then waits until the process is terminated.

Server settings that keep replies as before: the chat template stored in the GGUF renders the
prompt (Jinja), and the *pure content* reply parser returns the model's text as written, so tool
calls written as text are lifted client-side (:func:`wildtoolbench.models.llama.chat.lift_text_tool_calls`)
with the model's own argument text, not re-serialised by a server-side parser.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Any

#: The OpenMP wait policy of llama.cpp's compute threads unless ``OMP_WAIT_POLICY`` is set: a thread
#: that waits for the others sleeps instead of spinning. Spinning threads on cores that other jobs
#: share stall each other (measured on 2 shared cores: 1-3 generated tokens/s spinning, 10-25 passive).
PASSIVE = "PASSIVE"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The server options of the command line (everything after ``PARENT_PID``)."""
    parser = argparse.ArgumentParser(prog="_child.py")
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n_ctx", type=int, default=8192, help="tokens per slot")
    parser.add_argument("--n_threads", type=int, default=2)
    parser.add_argument("--n_parallel", type=int, default=1)
    parser.add_argument("--cache_ram_mib", type=int, default=1024)
    parser.add_argument("--chat_template", default="")
    parser.add_argument("--verbose", type=int, default=0)
    return parser.parse_args(argv)


def server_params(xllamacpp: Any, args: argparse.Namespace) -> Any:
    """``xllamacpp.CommonParams`` for ``args``."""
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.n_parallel
    params.n_ctx = args.n_ctx * args.n_parallel  # split evenly between the slots
    params.cpuparams.n_threads = args.n_threads
    params.cpuparams_batch.n_threads = args.n_threads
    params.cache_prompt = True
    params.cache_ram_mib = args.cache_ram_mib
    params.use_jinja = True
    params.force_pure_content_parser = True
    params.ui = False
    if args.chat_template:
        params.chat_template = args.chat_template
    # 3: info (timings, cache hits); 1: errors only (the pure content parser warns on every request)
    params.verbosity = 3 if args.verbose else 1
    return params


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def main(argv: list[str]) -> None:
    """Serve with the options ``argv[1:]`` while the process ``argv[0]`` (the parent) lives."""
    threading.Thread(target=_watch_parent, args=(int(argv[0]),), daemon=True).start()
    args = parse_args(argv[1:])
    os.environ.setdefault("OMP_WAIT_POLICY", PASSIVE)  # read by the OpenMP runtime when xllamacpp loads
    import xllamacpp

    server = xllamacpp.Server(server_params(xllamacpp, args))
    print(f"serving {args.alias} at {server.listening_address}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1:])
