"""``python -m wtb``: the ``wtb`` command (:func:`wtb.cli.main`), as the console script runs it."""

from wtb.cli import main

main()
