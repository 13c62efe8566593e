"""``wtb review``: a local web app in which people review a dataset's sessions (docs/review.md).

The parts: :mod:`wildtoolbench.review.checks` (what may be edited, an edit re-validated and re-audited),
:mod:`wildtoolbench.review.store` (the SQLite database of reviews), :mod:`wildtoolbench.review.agreement` (Cohen's kappa
between reviewers), :mod:`wildtoolbench.review.dag` (the gold DAG as SVG), :mod:`wildtoolbench.review.pages` (the HTML),
:mod:`wildtoolbench.review.app` (the Starlette application and its request checks), :mod:`wildtoolbench.review.export`
(the accepted and corrected sessions as a dataset, with a review log) and :mod:`wildtoolbench.review.serve`
(the loopback-only server).
"""
