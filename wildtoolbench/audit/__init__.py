"""`wtb audit`: the dataset audit of a folder or file (docs/audit.md), its coverage statistics (docs/coverage.md) and the command that runs them."""
