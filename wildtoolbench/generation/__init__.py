"""`wtb generate`: the options of a generation run, its checks, the run and the audit of what it made (docs/generation.md)."""
