"""Presentation (pure): what people read, rendered from the decisions' plain data.

The gate decides (:mod:`skillci.gate`: metrics, statistics, the verdict); this package
only shows. The rule for what lives here: a function whose output is text for a person
(Markdown, HTML, a table) and whose input is a shape another package already decided;
nothing here changes a verdict, a number or a row.

Modules: :mod:`skillci.present.report` (the gate report as the PR's sticky Markdown
comment), :mod:`skillci.present.html` (the self-contained HTML report),
:mod:`skillci.present.dashboard` (the dashboard issue's body and its checkboxes),
:mod:`skillci.present.bench` (the bench table), :mod:`skillci.present.mdsafe` (untrusted
values in Markdown). Design: docs/design/415-presentation-package.md.

May import: ``skillci.basemodels``, ``skillci.errors``, ``skillci.gate``,
``skillci.trace`` (docs/architecture.md; checked by tests/unit/test_architecture.py).
Nothing in ``gate/`` imports this package.
"""
