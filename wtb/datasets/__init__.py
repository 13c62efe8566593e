"""The official WildToolBench files: pinned, downloaded, verified and cached (``wtb data pull``).

- :mod:`wtb.datasets.official`: the pin table (repository path and git blob id of each file at one
  commit of the public repository), download or copy into the cache, verification.
- :mod:`wtb.datasets.names`: the names ``wildtoolbench`` (dataset) and ``wildtoolbench-en`` /
  ``wildtoolbench-zh`` (tool lists) that ``--dataset`` and ``--tools`` accept.
"""
