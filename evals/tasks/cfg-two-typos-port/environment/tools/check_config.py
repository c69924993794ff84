"""Validate config/*.ini against the schema below. Stops at the first error (fail fast).

Usage: python tools/check_config.py config/service.ini
"""

import difflib
import re
import sys

SCHEMA = {
    "server": {"host": ("str",), "port": ("int", 1, 65535), "workers": ("int", 1, 64)},
    "client": {"timeout": ("int", 1, 600), "retries": ("int", 0, 10), "backoff": ("choice", "none", "linear", "exponential")},
    "logging": {"log_level": ("choice", "debug", "info", "warning", "error"), "json": ("choice", "true", "false")},
    "features": {"enabled": ("choice", "true", "false"), "cache": ("choice", "true", "false")},
    "auth": {"api_token": ("str",), "issuer": ("str",)},
}
NOTE = ""


def fail(path, line, msg):
    print(f"{path}:{line}: {msg}")
    if NOTE:
        print(NOTE)
    sys.exit(1)


def check(path):
    section, seen = None, {}
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        m = re.match(r"^\[(\w+)\]$", line)
        if m:
            section = m.group(1)
            if section not in SCHEMA:
                fail(path, n, f"unknown section [{section}]")
            continue
        if "=" not in line or section is None:
            fail(path, n, "expected key = value inside a [section]")
        key, value = (p.strip() for p in line.split("=", 1))
        rules = SCHEMA[section]
        if key not in rules:
            close = difflib.get_close_matches(key, list(rules), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            fail(path, n, f"unknown key '{key}'{hint}")
        if (section, key) in seen:
            fail(path, n, f"duplicate key '{key}' (first defined on line {seen[section, key]})")
        seen[section, key] = n
        kind = rules[key]
        if kind[0] == "int":
            if not re.fullmatch(r"-?\d+", value):
                fail(path, n, f"invalid value '{value}' for '{key}': expected an integer")
            if not kind[1] <= int(value) <= kind[2]:
                fail(path, n, f"value {value} for '{key}' out of range [{kind[1]}, {kind[2]}]")
        elif kind[0] == "choice" and value not in kind[1:]:
            fail(path, n, f"invalid value '{value}' for '{key}': expected one of: {', '.join(kind[1:])}")
    print(f"{path}: ok")


if __name__ == "__main__":
    check(sys.argv[1])
