"""The HTML report's inline stylesheet and script, and the Content-Security-Policy that
allows exactly these two and nothing else (no network, no other script) (pure).

The policy pins the style and the script by their SHA-256, so even a piece of run-record
text that escaped escaping could neither run script nor load anything.
"""

from __future__ import annotations

import base64
import hashlib

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:var(--fg);background:#fff}
main{max-width:1240px;margin:0 auto;padding:0 20px 48px}
a{color:#0969da}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px}
.verdict{padding:18px 24px 16px;border-radius:0 0 10px 10px;color:#fff;margin:0 0 14px}
.verdict.accept{background:#1a7f37}
.verdict.reject{background:#cf222e}
.verdict .word{font-size:34px;font-weight:800;letter-spacing:.04em;margin:0}
.verdict h1{font-size:20px;margin:2px 0 6px;font-weight:600}
.verdict p{margin:2px 0;opacity:.95}
.verdict code{background:rgba(255,255,255,.18);padding:0 4px;border-radius:4px}
h2{font-size:19px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 6px}
p{margin:6px 0}
.muted{color:var(--muted)}
.reasons{background:#ffebe9;border:1px solid #ffcecb;border-radius:6px;padding:8px 12px}
.reasons ul{margin:4px 0 0;padding-left:20px}
.facts{display:flex;flex-wrap:wrap;gap:6px 18px;margin:8px 0;color:var(--muted)}
.facts b{color:var(--fg);font-weight:600}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:6px 0 10px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.failed td{background:#fff5f4}
.pass{color:var(--ok);font-weight:600}
.fail{color:var(--bad);font-weight:700}
.chg-repair{color:var(--ok);font-weight:600}
.chg-regression{color:var(--bad);font-weight:700}
.chg-unchanged_pass,.chg-unchanged_fail{color:var(--muted)}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:14px;margin-top:8px}
figure{margin:0;border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:#fff}
figure.wide{grid-column:1/-1}
figcaption{font-weight:600;margin-bottom:6px}
figcaption span{font-weight:400;color:var(--muted)}
svg{max-width:100%;height:auto;display:block}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:11px;fill:#1f2328}
svg text.axis{fill:#59636e}
svg text.small{font-size:10px}
svg text.bold{font-weight:600}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:var(--muted);margin-top:6px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px;background:#8c959f}
.sw-base{background:#8c959f}.sw-head{background:#0969da}.sw-baseline{background:#d4a72c}.sw-teacher{background:#8250df}
.sw-repair{background:#1a7f37}.sw-regression{background:#cf222e}.sw-unchanged_pass{background:#8fd19e}.sw-unchanged_fail{background:#d0d7de}
.sw-ci{background:none;border-top:2px solid #1f2328;height:0;width:12px;border-radius:0;vertical-align:3px}
.note{color:var(--muted);font-style:italic}
.toolbar{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:6px 0}
button{font:inherit;font-size:13px;padding:2px 10px;border:1px solid var(--line);border-radius:6px;background:var(--soft);color:var(--fg);cursor:pointer}
button[aria-pressed=true]{background:#ddf4ff;border-color:#54aeff}
input[type=search]{font:inherit;padding:2px 8px;border:1px solid var(--line);border-radius:6px;min-width:240px}
.hidden-f,.hidden-q{display:none!important}
details>summary{cursor:pointer}
details.block{margin:6px 0}
details.traj{border:1px solid var(--line);border-radius:8px;margin:6px 0;background:#fff}
details.traj>summary{padding:6px 10px;background:var(--soft);border-radius:8px}
details.traj[open]>summary{border-bottom:1px solid var(--line);border-radius:8px 8px 0 0}
details.traj>summary .sum{margin-left:10px;color:var(--muted)}
.evidence{padding:6px 12px 0;font-size:12px;color:var(--muted)}
.cols{display:grid;gap:10px;padding:10px}
.cols-1{grid-template-columns:minmax(0,1fr)}
.cols-2{grid-template-columns:repeat(2,minmax(0,1fr))}
.cols-3{grid-template-columns:repeat(3,minmax(0,1fr))}
.cols-4{grid-template-columns:repeat(4,minmax(0,1fr))}
.col h4{margin:0 0 6px;font-size:13px;padding:3px 8px;border-left:4px solid #8c959f;background:var(--soft)}
.col-head h4{border-color:#0969da}.col-baseline h4{border-color:#d4a72c}.col-teacher h4{border-color:#8250df}
details.run{border:1px solid var(--line);border-radius:6px;margin:0 0 8px}
details.run>summary{padding:4px 8px;font-size:12.5px}
.meta{font-size:12px;color:var(--muted);padding:0 8px}
ol.events{list-style:none;margin:0;padding:2px 8px 8px}
li.ev{border-left:3px solid var(--line);padding:2px 8px;margin:4px 0}
li.ev-tool_call{border-color:#0969da}
li.ev-tool_result{border-color:#8c959f}
li.ev-skill_load{border-color:#8250df;background:#fbefff}
li.ev-error{border-color:#cf222e;background:#fff5f4}
li.role-assistant{border-color:#1a7f37}
.ev-h{font-size:12px;color:var(--muted)}
.ev-h b{color:var(--fg)}
.step{display:inline-block;min-width:2.4em;color:var(--muted)}
pre{margin:2px 0;white-space:pre-wrap;overflow-wrap:anywhere;max-height:16em;overflow:auto;background:var(--soft);padding:4px 6px;border-radius:4px}
.omitted{display:block;color:var(--warn);font-style:italic;font-family:system-ui,sans-serif}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;font-weight:600;background:var(--soft);color:var(--muted)}
.badge.ok{background:#dafbe1;color:#1a7f37}
.badge.bad{background:#ffebe9;color:#cf222e}
.missing{color:var(--warn);font-style:italic;padding:4px 8px}
@media (max-width:800px){.cols-2,.cols-3,.cols-4{grid-template-columns:minmax(0,1fr)}}
@media print{details.traj{break-inside:avoid}.toolbar{display:none}}
"""

JS = """
(function () {
  "use strict";
  var doc = document;
  function all(sel, root) {
    return Array.prototype.slice.call((root || doc).querySelectorAll(sel));
  }
  function matches(change, f) {
    if (f === "all") return true;
    if (f === "changed") return change === "repair" || change === "regression";
    return change === f;
  }
  all("[data-filter-for]").forEach(function (bar) {
    var target = doc.getElementById(bar.getAttribute("data-filter-for"));
    if (!target) return;
    var buttons = all("button[data-filter]", bar);
    buttons.forEach(function (btn) {
      btn.addEventListener("click", function () {
        var f = btn.getAttribute("data-filter");
        buttons.forEach(function (b) { b.setAttribute("aria-pressed", String(b === btn)); });
        all("[data-change]", target).forEach(function (item) {
          item.classList.toggle("hidden-f", !matches(item.getAttribute("data-change"), f));
        });
      });
    });
  });
  var trajs = all("details.traj");
  all("button[data-expand]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var open = btn.getAttribute("data-expand") === "1";
      trajs.forEach(function (d) {
        if (!d.classList.contains("hidden-f") && !d.classList.contains("hidden-q")) d.open = open;
      });
    });
  });
  var query = doc.getElementById("traj-query");
  if (query) {
    query.addEventListener("input", function () {
      var q = query.value.trim().toLowerCase();
      trajs.forEach(function (d) {
        var task = (d.getAttribute("data-task") || "").toLowerCase();
        d.classList.toggle("hidden-q", q !== "" && task.indexOf(q) < 0);
      });
    });
  }
  function openTarget() {
    var id = location.hash ? decodeURIComponent(location.hash.slice(1)) : "";
    var t = id ? doc.getElementById(id) : null;
    if (t && t.tagName === "DETAILS") {
      t.open = true;
      t.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  doc.documentElement.setAttribute("data-ready", "1");
})();
"""


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CSP = (
    "default-src 'none'; "
    f"style-src 'sha256-{_sha256(CSS)}'; "
    f"script-src 'sha256-{_sha256(JS)}'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
"""Only the inline style and script above may apply; nothing may be fetched."""
