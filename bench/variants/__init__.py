"""Controlled single-factor variants of a dataset and their paired statistics (docs/variants.md).

Pure functions, no LangGraph: ``common`` (fields, checks), ``tools`` (``names``, ``distractors``),
``turns`` (``explicit``, ``transitions``), ``build`` (one factor over a dataset, pairs, manifest),
``stats`` (paired differences, clustered intervals, the sign-flip test).
"""
