"""Former home of the ``openai:`` provider, now :mod:`models.providers.openai`.

Kept only because :mod:`models.local_chat` (the llama.cpp runtime, which is being replaced and moved
to ``models/llama/``) imports :class:`RawChatOpenAI` from here; new code imports
:mod:`models.providers.openai`.
"""

from models.providers.openai import RawChatOpenAI

__all__ = ["RawChatOpenAI"]
