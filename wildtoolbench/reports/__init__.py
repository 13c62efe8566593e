"""``wtb report``: a static report of one or more runs beside the paper's leaderboard.

:func:`build_report` reads run folders (``metric.json``, ``score.jsonl``, and when
present ``result.jsonl``, ``summary.json``, ``run.json`` and the dataset it names)
and writes ``index.html`` (works offline from ``file://``), ``report.md``,
``leaderboard.csv``, ``orchestration.csv``, ``errors.csv``, ``tasks.csv``,
``report.json`` and ``plots/*.svg``.
"""

from wildtoolbench.reports.build import FILES, build_report
from wildtoolbench.reports.content import Report
from wildtoolbench.reports.run_data import ReportError

__all__ = ["FILES", "Report", "ReportError", "build_report"]
