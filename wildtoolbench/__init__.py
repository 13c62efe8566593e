"""The ``wtb`` application: command line, batch runners, result store, tracing set-up, experiments, reports.

The layers below it (``graphs``, ``nodes``, ``models``, ``prompts``, ``bench``) never import it.
"""
