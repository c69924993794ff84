"""Textual edits of ``skillci.yaml`` that leave every other byte alone (pure).

A release changes two things in the manifest: the ``version:`` line and the
``compatibility:`` block. Re-dumping the whole file would drop comments and reorder keys, so
the version value is replaced in place (quotes and a trailing comment survive) and the
compatibility block — and only it — is re-dumped. Every edit is re-parsed and checked: the
result must validate and differ from the input in exactly the intended fields.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from skillci.errors import InternalError, SkillFormatError
from skillci.skill import yamlio
from skillci.skill.models import CompatEntry, Compatibility, Manifest
from skillci.skill.package import MANIFEST as PACKAGE_MANIFEST

MANIFEST = PACKAGE_MANIFEST
_VERSION_RE = re.compile(
    r"^(?P<key>version:[ \t]*)(?P<q>['\"]?)(?P<v>[^'\"\s#]+)(?P=q)(?P<rest>[ \t]*(#.*)?)$"
)
_ROW_ORDER = ("model", "quantization", "harness", "score", "eval_id", "version", "reason")


class _IndentDumper(yaml.SafeDumper):
    """Indents block sequences under their key, as the bundled manifests are written."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _lines(text: str) -> tuple[list[str], str]:
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += newline
    return lines, newline


def _parse(text: str) -> Manifest:
    data, _node = yamlio.load(text, MANIFEST)
    try:
        return Manifest.model_validate(data)
    except Exception as exc:
        raise SkillFormatError(f"invalid manifest: {exc}", file=MANIFEST) from None


def _same_except(before: Manifest, after: Manifest, fields: set[str]) -> bool:
    return before.model_dump(mode="json", exclude=fields) == after.model_dump(
        mode="json", exclude=fields
    )


def set_version(text: str, version: str) -> str:
    """``text`` with the top-level ``version:`` value replaced by ``version``."""
    lines, _nl = _lines(text)
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        m = _VERSION_RE.match(body)
        if m:
            ending = line[len(body) :]
            lines[i] = f"{m['key']}{m['q']}{version}{m['q']}{m['rest']}{ending}"
            break
    else:
        raise SkillFormatError(
            "no top-level `version:` line", file=MANIFEST, hint="add `version: 0.1.0`"
        )
    out = "".join(lines)
    before, after = _parse(text), _parse(out)
    if after.version != version or not _same_except(before, after, {"version"}):
        raise InternalError("manifest version edit changed more than the version")
    return out


def _block(lines: list[str], key: str) -> tuple[int, int] | None:
    """[start, end) line range of top-level ``key``'s block (trailing blanks/comments excluded)."""
    start = next((i for i, ln in enumerate(lines) if re.match(rf"^{key}:(\s|$)", ln)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines):
        ln = lines[end]
        if ln.strip() and not ln.startswith((" ", "\t", "-", "#")):
            break
        end += 1
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1
    return start, end


def row_data(row: CompatEntry) -> dict[str, Any]:
    """A compatibility row as a plain mapping in a fixed key order, empty fields dropped."""
    data = row.model_dump(mode="json", exclude_none=True)
    out = {k: data.pop(k) for k in _ROW_ORDER if k in data}
    out.update(data)  # unknown keys a human added
    return out


def dump_compatibility(compat: Compatibility, newline: str = "\n") -> str:
    data = {
        "compatibility": {
            kind: [row_data(r) for r in getattr(compat, kind)]
            for kind in ("verified", "unverified", "incompatible")
        }
    }
    text = str(
        yaml.dump(
            data,
            Dumper=_IndentDumper,
            sort_keys=False,
            allow_unicode=True,
            width=4096,
            default_flow_style=False,
        )
    )
    return text.replace("\n", newline) if newline != "\n" else text


def set_compatibility(text: str, compat: Compatibility) -> str:
    """``text`` with the top-level ``compatibility:`` block replaced (appended if absent)."""
    lines, nl = _lines(text)
    new = dump_compatibility(compat, nl)
    rng = _block(lines, "compatibility")
    if rng is None:
        out = "".join(lines) + new
    else:
        lo, hi = rng
        out = "".join(lines[:lo]) + new + "".join(lines[hi:])
    before, after = _parse(text), _parse(out)
    want = compat.model_dump(mode="json", exclude_none=True)
    if after.compatibility.model_dump(mode="json", exclude_none=True) != want or not _same_except(
        before, after, {"compatibility"}
    ):
        raise InternalError("manifest compatibility edit changed more than compatibility")
    return out
