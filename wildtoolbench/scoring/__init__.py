"""`wtb score` and `wtb validate`: scoring a run folder's stored replies against the dataset (docs/scoring.md)."""
