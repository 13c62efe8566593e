"""The official WildToolBench files: pinned, downloaded, verified and cached (``wtb data pull``).

- :mod:`wildtoolbench.data.official`: the pin table (repository path and git blob id of each file at one
  commit of the public repository), download or copy into the cache, verification.
- :mod:`wildtoolbench.data.names`: the names ``wildtoolbench`` (dataset) and ``wildtoolbench-en`` /
  ``wildtoolbench-zh`` (tool lists) that ``--dataset`` and ``--tools`` accept.
"""
