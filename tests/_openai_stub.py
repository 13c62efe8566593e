"""The loopback OpenAI-compatible test server: re-exported from :mod:`bench.openai_stub`
(the performance benchmark runs the same server in its own process)."""

from bench.openai_stub import ScriptedServer, session_key

__all__ = ["ScriptedServer", "session_key"]
