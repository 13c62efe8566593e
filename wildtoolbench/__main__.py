"""``python -m wildtoolbench``: the ``wtb`` command (:func:`wildtoolbench.cli.main`), as the console script runs it."""

from wildtoolbench.cli import main

main()
