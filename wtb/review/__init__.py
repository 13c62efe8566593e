"""``wtb review``: a local web app in which people review a dataset's sessions (docs/review.md).

The parts: :mod:`wtb.review.checks` (what may be edited, an edit re-validated and re-audited),
:mod:`wtb.review.store` (the SQLite database of reviews), :mod:`wtb.review.agreement` (Cohen's kappa
between reviewers), :mod:`wtb.review.dag` (the gold DAG as SVG), :mod:`wtb.review.pages` (the HTML),
:mod:`wtb.review.app` (the Starlette application and its request checks), :mod:`wtb.review.export`
(the accepted and corrected sessions as a dataset, with a review log) and :mod:`wtb.review.serve`
(the loopback-only server).
"""
