"""Entry point of the llama.cpp server child process (run by file path, not imported by the project).

Usage: ``python _llama_child.py PARENT_PID [llama_cpp.server arguments...]``

1. A watchdog thread exits this process as soon as its parent is gone, so a server never
   outlives the run that started it (even when that run was killed with SIGKILL).
2. Chat templates taken from a GGUF file (Hugging Face style, e.g. Qwen2.5's) expect each
   earlier tool call's ``arguments`` as an object, as Hugging Face ``apply_chat_template`` and
   vLLM provide; llama-cpp-python passes the OpenAI wire form, a JSON string, which the template
   then prints as an escaped string and the model imitates. The string is decoded to an object
   before rendering (only when it is a JSON object; anything else is left as sent).
3. Then llama-cpp-python's own server CLI runs with the remaining arguments.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import threading
import time
from typing import Any


def decode_tool_call_arguments(messages: list[Any]) -> list[Any]:
    """Copy of ``messages`` where assistant ``tool_calls[].function.arguments`` JSON-object strings are objects."""
    out = []
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if calls:
            fixed = []
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                arguments = function.get("arguments") if isinstance(function, dict) else None
                if isinstance(arguments, str):
                    try:
                        value = json.loads(arguments)
                    except ValueError:
                        value = None
                    if isinstance(value, dict):
                        call = {**call, "function": {**function, "arguments": value}}
                fixed.append(call)
            message = {**message, "tool_calls": fixed}
        out.append(message)
    return out


def _patch_chat_templates() -> None:
    from llama_cpp import llama_chat_format

    render = llama_chat_format.Jinja2ChatFormatter.__call__

    def call(self: Any, *, messages: list[Any], **kwargs: Any) -> Any:
        return render(self, messages=decode_tool_call_arguments(messages), **kwargs)

    llama_chat_format.Jinja2ChatFormatter.__call__ = call  # type: ignore[method-assign]


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def main(argv: list[str]) -> None:
    """Run the server CLI with ``argv[1:]`` while the process ``argv[0]`` (the parent) lives."""
    threading.Thread(target=_watch_parent, args=(int(argv[0]),), daemon=True).start()
    _patch_chat_templates()
    sys.argv = ["llama_cpp.server", *argv[1:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
