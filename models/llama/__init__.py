"""The local llama.cpp runtime: the ``gguf:`` and ``local`` providers (the ``local`` extra).

- :mod:`wildtoolbench.models.llama.gguf`: ``gguf:PATH``, any GGUF file;
- :mod:`wildtoolbench.models.llama.local`: ``local``, the bundled model;
- :mod:`wildtoolbench.models.llama.bundled`: joins and verifies the bundled model's part packages;
- :mod:`wildtoolbench.models.llama.server`: starts and supervises llama.cpp's server (prebuilt ``xllamacpp``) in a child process;
- :mod:`wildtoolbench.models.llama.chat`: ``LocalChatOpenAI``, the langchain-openai client adapted to that server.

Nothing here imports ``xllamacpp``: only the child process (:mod:`wildtoolbench.models.llama._child`) does.
"""
