"""`wtb eval`: the options of a run, checked once, its evaluation context, the run, its scoring and report (docs/cli.md §6, docs/evaluation.md)."""
