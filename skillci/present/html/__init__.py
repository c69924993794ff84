"""The HTML gate report (pure): :func:`render_html` turns a GateReport and its evidence run
records into one self-contained static page — inline CSS, JS and SVG, a Content-Security-
Policy that forbids any fetch, and every piece of record text escaped.

Modules: :mod:`~skillci.present.html.page` (sections, render_html),
:mod:`~skillci.present.html.charts` (SVG), :mod:`~skillci.present.html.trajectory` (viewer),
:mod:`~skillci.present.html.markup` (escaping builder), :mod:`~skillci.present.html.assets`
(CSS, JS, CSP). Writing the file is :func:`skillci.flows.html_report.write_html`.
Design: docs/design/070-html-report.md.
"""

from __future__ import annotations

from skillci.present.html.page import DEFAULT_MAX_TEXT, render_html
from skillci.present.html.trajectory import evidence_runs, referenced_run_ids

__all__ = ["DEFAULT_MAX_TEXT", "evidence_runs", "referenced_run_ids", "render_html"]
