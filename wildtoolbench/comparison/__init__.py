"""`wtb compare`, `wtb diff` and `wtb gate`: two runs of the same sessions side by side (docs/guides/comparing.md, docs/diff.md)."""
