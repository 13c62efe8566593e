"""``wtb variants``: controlled single-factor variants of a dataset (docs/variants.md)."""
