"""The local llama.cpp runtime: the ``gguf:`` and ``local`` providers (the ``local`` extra).

- :mod:`models.llama.gguf`: ``gguf:PATH``, any GGUF file;
- :mod:`models.llama.local`: ``local``, the bundled model;
- :mod:`models.llama.bundled`: joins and verifies the bundled model's part packages;
- :mod:`models.llama.server`: starts and supervises llama.cpp's server (prebuilt ``xllamacpp``) in a child process;
- :mod:`models.llama.chat`: ``LocalChatOpenAI``, the langchain-openai client adapted to that server.

Nothing here imports ``xllamacpp``: only the child process (:mod:`models.llama._child`) does.
"""
