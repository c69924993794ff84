"""The HTML gate report (pure): :func:`render_html` turns a GateReport and its evidence run
records into one self-contained static page — inline CSS, JS and SVG, a Content-Security-
Policy that forbids any fetch, and every piece of record text escaped.

Modules: :mod:`~skillci.gate.html.page` (sections, render_html),
:mod:`~skillci.gate.html.charts` (SVG), :mod:`~skillci.gate.html.trajectory` (viewer),
:mod:`~skillci.gate.html.markup` (escaping builder), :mod:`~skillci.gate.html.assets`
(CSS, JS, CSP). Writing the file is :func:`skillci.flows.html_report.write_html`.
Design: docs/design/070-html-report.md.
"""

from __future__ import annotations

from skillci.gate.html.page import DEFAULT_MAX_TEXT, render_html
from skillci.gate.html.trajectory import evidence_runs, referenced_run_ids

__all__ = ["DEFAULT_MAX_TEXT", "evidence_runs", "referenced_run_ids", "render_html"]
