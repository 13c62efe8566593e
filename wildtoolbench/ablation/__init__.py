"""``wtb ablate``: which wild behaviour costs a model how much (docs/variants.md §6)."""
