"""GitHub's official OpenAPI description as a contract for the fake GitHub API.

The description comes from the npm package ``@octokit/openapi`` (GitHub's
``github/rest-api-description`` plus Octokit extensions), pinned to
:data:`OCTOKIT_OPENAPI_VERSION` and installed into a cache directory outside the
repository (``$SKILLCI_TEST_CACHE`` or ``~/.cache/skillci-tests``). CI (``.ci/run``) installs
it with :func:`npm_install_command`; the test run never does: tests that need it are marked
``github_openapi`` and skip without it, or fail under ``SKILLCI_REQUIRE_SERVICES``
(tests/conftest.py). :func:`ensure_spec` still installs when called directly.

The description is OpenAPI 3.0.3, whose schemas are *almost* JSON Schema: ``nullable:
true`` is the one keyword that changes validation. :func:`to_json_schema` rewrites it
(``type: X`` -> ``type: [X, "null"]``; combinators are wrapped in
``anyOf: [..., {type: null}]``) and the result is validated as JSON Schema 2020-12 with
``jsonschema``, ``$ref`` resolved inside the same document through a ``referencing``
registry.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from filelock import FileLock
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry
from referencing.jsonschema import DRAFT202012

OCTOKIT_OPENAPI_VERSION = "23.0.2"
SPEC_FILE = "api.github.com.json"
DOC_URI = "urn:github:api.github.com"
METHODS = ("get", "post", "put", "patch", "delete")


def cache_root() -> Path:
    return Path(os.environ.get("SKILLCI_TEST_CACHE") or Path.home() / ".cache" / "skillci-tests")


def install_dir() -> Path:
    return cache_root() / f"octokit-openapi-{OCTOKIT_OPENAPI_VERSION}"


def package_dir() -> Path:
    return install_dir() / "node_modules" / "@octokit" / "openapi"


def spec_path() -> Path:
    return package_dir() / "generated" / SPEC_FILE


def npm_install_command() -> list[str]:
    return [
        "npm",
        "install",
        "--prefix",
        str(install_dir()),
        "--no-audit",
        "--no-fund",
        f"@octokit/openapi@{OCTOKIT_OPENAPI_VERSION}",
    ]


class SpecUnavailable(RuntimeError):
    """The OpenAPI description is missing and could not be installed."""


def ensure_spec() -> Path:
    """The path of ``api.github.com.json``, installing the npm package if needed."""
    cache_root().mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_root() / "octokit-openapi.lock"), timeout=600):
        if not spec_path().is_file():
            cmd = npm_install_command()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=540, check=False)
            except FileNotFoundError:
                raise SpecUnavailable(
                    "npm is not installed; it is needed once to fetch @octokit/openapi "
                    f"({' '.join(cmd)})"
                ) from None
            if proc.returncode != 0 or not spec_path().is_file():
                raise SpecUnavailable(
                    f"`{' '.join(cmd)}` failed (exit {proc.returncode}): "
                    f"{(proc.stderr or proc.stdout).strip()[-2000:]}"
                )
        meta = json.loads((package_dir() / "package.json").read_text())
        if meta.get("version") != OCTOKIT_OPENAPI_VERSION:
            raise SpecUnavailable(
                f"{package_dir()} holds @octokit/openapi {meta.get('version')}, "
                f"expected {OCTOKIT_OPENAPI_VERSION}; delete {install_dir()} and re-run"
            )
    return spec_path()


# --------------------------------------------------------------------------- conversion

_COMBINATORS = ("allOf", "anyOf", "oneOf", "$ref")


def to_json_schema(node: Any) -> Any:
    """A copy of an OpenAPI 3.0 document whose schemas say ``nullable`` in JSON Schema."""
    if isinstance(node, list):
        return [to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: to_json_schema(v) for k, v in node.items()}
    if out.pop("nullable", False) is not True:
        return out
    if any(k in out for k in _COMBINATORS):
        return {"anyOf": [out, {"type": "null"}]}
    if "type" in out:
        t = out["type"]
        out["type"] = [*t, "null"] if isinstance(t, list) else [t, "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    # no type and no combinator: the schema already accepts anything, null included
    return out


# --------------------------------------------------------------------------- formats

_FORMATS = FormatChecker(formats=())


@_FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", value):
        raise ValueError(f"{value!r} is not an RFC 3339 date-time")
    datetime.fromisoformat(value.replace("Z", "+00:00"))
    return True


@_FORMATS.checks("uri", raises=ValueError)
def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parsed = urlparse(value)
    if not parsed.scheme or " " in value or not (parsed.netloc or parsed.path):
        raise ValueError(f"{value!r} is not a URI")
    return True


# --------------------------------------------------------------------------- operations


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class Operation:
    """One operation of the description: a method on a path template."""

    method: str
    template: str
    operation_id: str
    pointer: str  # JSON pointer of the operation object in the document


@dataclass
class Contract:
    """Loaded description: match requests to operations, validate bodies, count."""

    doc: dict[str, Any]
    version: str
    responses_validated: int = 0
    requests_validated: int = 0
    operations_seen: Counter[str] = field(default_factory=Counter)
    _routes: list[tuple[re.Pattern[str], str]] = field(default_factory=list)
    _validators: dict[str, Draft202012Validator] = field(default_factory=dict)
    _registry: Registry[Any] = field(default_factory=Registry)

    @classmethod
    def load(cls, path: Path | None = None) -> Contract:
        raw = json.loads((path or ensure_spec()).read_text())
        if not str(raw.get("openapi", "")).startswith("3.0"):
            raise SpecUnavailable(
                f"expected an OpenAPI 3.0 description, got {raw.get('openapi')!r}; "
                "revisit the nullable handling in tests/fakes/openapi.py"
            )
        doc = to_json_schema(raw)
        c = cls(doc=doc, version=str(raw["info"]["version"]))
        c._registry = Registry().with_resource(DOC_URI, DRAFT202012.create_resource(doc))
        for template in doc["paths"]:
            c._routes.append((_template_regex(template), template))
        # literal segments first, so /commits/{ref}/status wins over /commits/{ref}
        c._routes.sort(key=lambda r: (-_literal_segments(r[1]), r[1].count("{")))
        return c

    # -------------------------------------------------------------- lookup

    def operation(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation a concrete request path hits, with its path parameters."""
        m_lower = method.lower()
        for regex, template in self._routes:
            m = regex.fullmatch(path)
            if m and m_lower in self.doc["paths"][template]:
                op = self.doc["paths"][template][m_lower]
                pointer = f"/paths/{_escape(template)}/{m_lower}"
                return Operation(m_lower, template, op["operationId"], pointer), m.groupdict()
        return None

    def _resolve(self, node: dict[str, Any], pointer: str) -> tuple[dict[str, Any], str]:
        while "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/"):
                raise ValueError(f"external $ref {ref} is not supported")
            pointer = ref[1:]
            node = self._at(pointer)
        return node, pointer

    def _at(self, pointer: str) -> Any:
        node: Any = self.doc
        for part in pointer.lstrip("/").split("/"):
            key = part.replace("~1", "/").replace("~0", "~")
            node = node[int(key)] if isinstance(node, list) else node[key]
        return node

    def _validator(self, pointer: str) -> Draft202012Validator:
        v = self._validators.get(pointer)
        if v is None:
            v = Draft202012Validator(
                {"$ref": f"{DOC_URI}#{pointer}"},
                registry=self._registry,
                format_checker=_FORMATS,
            )
            self._validators[pointer] = v
        return v

    def _errors(self, pointer: str, instance: Any, where: str) -> list[str]:
        errs = sorted(self._validator(pointer).iter_errors(instance), key=lambda e: list(e.path))
        out = []
        for e in errs[:5]:
            at = "/".join(str(p) for p in e.path) or "<root>"
            out.append(f"{where}: at {at}: {e.message[:300]}")
        return out

    def _parameters(self, op: Operation) -> Iterator[tuple[dict[str, Any], str]]:
        path_ptr = op.pointer.rsplit("/", 1)[0]
        for base in (path_ptr, op.pointer):
            node = self._at(base)
            for i, p in enumerate(node.get("parameters", [])):
                yield self._resolve(p, f"{base}/parameters/{i}")

    # -------------------------------------------------------------- requests

    def check_request(
        self, op: Operation, query: dict[str, list[str]], body: Any, has_body: bool
    ) -> list[str]:
        """Problems with a request (query parameters and JSON body) for ``op``."""
        self.requests_validated += 1
        where = f"{op.method.upper()} {op.template} request"
        errors: list[str] = []
        params = {p["name"]: (p, ptr) for p, ptr in self._parameters(op) if p["in"] == "query"}
        for name, values in query.items():
            if name not in params:
                errors.append(f"{where}: query parameter {name!r} is not in the description")
                continue
            p, ptr = params[name]
            schema = self._at(ptr + "/schema")
            for v in values:
                errors += self._errors(ptr + "/schema", _coerce(v, schema), f"{where} ?{name}")
        for name, (p, _) in params.items():
            if p.get("required") and name not in query:
                errors.append(f"{where}: required query parameter {name!r} missing")
        op_node = self._at(op.pointer)
        rb = op_node.get("requestBody")
        if rb is None:
            if has_body:
                errors.append(f"{where}: the operation takes no body")
            return errors
        rb, rb_ptr = self._resolve(rb, op.pointer + "/requestBody")
        if not has_body:
            if rb.get("required"):
                errors.append(f"{where}: body required")
            return errors
        if "application/json" not in rb.get("content", {}):
            return [*errors, f"{where}: no application/json body in the description"]
        ptr = rb_ptr + "/content/application~1json/schema"
        return errors + self._errors(ptr, body, where)

    # -------------------------------------------------------------- responses

    def check_response(self, op: Operation, status: int, body: Any, has_body: bool) -> list[str]:
        """Problems with a response ``status``/``body`` for ``op``; counts it."""
        self.responses_validated += 1
        self.operations_seen[f"{op.method.upper()} {op.template} {status}"] += 1
        where = f"{op.method.upper()} {op.template} -> {status}"
        responses = self._at(op.pointer)["responses"]
        key = str(status)
        if key not in responses:
            if status < 400:
                return [f"{where}: status {status} is not documented for {op.operation_id}"]
            # GitHub returns undocumented 4xx/5xx; they all carry a basic-error body
            return self._errors("/components/schemas/basic-error", body, where + " (basic-error)")
        resp, ptr = self._resolve(responses[key], f"{op.pointer}/responses/{key}")
        content = resp.get("content")
        if not content:
            return [f"{where}: the description says no body, the fake sent one"] if has_body else []
        if not has_body:
            return [f"{where}: the description requires a body"]
        if "application/json" not in content:
            return [f"{where}: no application/json response in the description"]
        return self._errors(ptr + "/content/application~1json/schema", body, where)

    def figures(self) -> str:
        ops = {k.rsplit(" ", 1)[0] for k in self.operations_seen}
        return (
            f"{self.responses_validated} responses and {self.requests_validated} requests "
            f"validated against @octokit/openapi {self.version} "
            f"({len(ops)} operations, {len(self.operations_seen)} operation/status pairs)"
        )


def _template_regex(template: str) -> re.Pattern[str]:
    out = ""
    for part in re.split(r"(\{[^}]+\})", template):
        if part.startswith("{"):
            name = part[1:-1]
            # git refs and content paths contain slashes
            body = ".+" if name in ("ref", "path") else "[^/]+"
            out += f"(?P<{re.sub(r'[^0-9A-Za-z_]', '_', name)}>{body})"
        else:
            out += re.escape(part)
    return re.compile(out)


def _literal_segments(template: str) -> int:
    return sum(1 for s in template.split("/") if s and "{" not in s)


def _coerce(value: str, schema: dict[str, Any]) -> Any:
    """A query-string value as the JSON type its schema wants."""
    t = schema.get("type")
    types = t if isinstance(t, list) else [t]
    if "integer" in types and re.fullmatch(r"-?\d+", value):
        return int(value)
    if "boolean" in types and value in ("true", "false"):
        return value == "true"
    if "array" in types:
        return value.split(",")
    return value
