"""The application layer of the ``wtb`` command line: what each sub-command does (docs/cli.md §6).

``wtb/cli/`` parses the command line and makes one call per command into a module here:

- :mod:`wtb.commands.exits`: the exit-status rule of every sub-command, written once
  (:func:`~wtb.commands.exits.exit_on_error`, docs/cli.md §2);
- :mod:`wtb.commands.evaluate`: ``wtb eval`` (:class:`~wtb.commands.evaluate.EvalOptions` validated
  once, the evaluation context built once, the checks, the run, its scoring and report);
- :mod:`wtb.commands.generate`: ``wtb generate`` (:class:`~wtb.commands.generate.GenerateOptions`, the
  tool lists, role modules and models checked before any session, the run, its closing lines);
- :mod:`wtb.commands.experiment`: ``wtb eval --langsmith-dataset``, the run as a LangSmith experiment;
- :mod:`wtb.commands.score`: ``wtb validate`` and ``wtb score``;
- :mod:`wtb.commands.report`: ``wtb report`` (and ``wtb eval --report``);
- :mod:`wtb.commands.data`: ``wtb data pull`` and the official data names (``--dataset wildtoolbench``).

This package file imports nothing, and :mod:`wtb.commands.exits` and :mod:`wtb.commands.inputs` import
only typer, so the CLI modules may import them at start-up; the other modules import the scoring core,
the runners and rich at their top, and the CLI imports each of them only inside a command body
(docs/cli.md §1).
"""
