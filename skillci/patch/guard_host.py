"""Design 438: orders that act on the host machine outside any workspace.

A skill teaches an agent to work on a repository. Its rules have no business deleting or
overwriting the host's system files (``/etc``, ``/boot``, ``/proc``, ``/sys``, ``/root``,
``/var/log``, ``/var/lib``), reading or copying the host's credential stores (``shadow``,
``sudoers``, ``~/.ssh``, ``~/.aws``, ``.netrc`` ...), or killing the processes of the
machine picked by name. The reading is one of *classes*, not of strings:

- a **host path**: an absolute path (or one that climbs out with ``../``) whose top
  directory is a system directory, or a dot-directory of credentials under a home;
- an **action** on it: in prose (a line; inline code included) a destroying verb within
  80 characters before or 40 after the path, a reading verb in the line or the next four;
  in a fenced code block the path's line and the lines that use the variable it is
  assigned to (two steps): destroy (delete, remove, overwrite,
  truncate; ``rm``, ``os.remove``, ``.unlink()``, ``open(p, 'w')``), or read/copy (read,
  print, copy, ``cat``, ``cp``, ``open(p)``, ``shutil.copy``);
- the text **orders** it: a prose sentence that opens as an order and where no negation
  governs the action ("never delete /etc/hosts" is a rule), a code block not introduced by
  a prohibition.

Verdicts: destroying a host path and reading or copying a credential store are ``high``
(``destructive-command``, ``host-credentials``); reading or copying another system file,
writing a shell start-up file, and killing processes picked by name are ``medium``
(``host-files``, ``host-processes``): a human approves them (deploy and ops skills do read
``/etc/os-release`` or stop a stale server).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

import skillci.patch.clauses as grammar
from skillci.patch.intents import opens_order

#: Codes a human may approve (the guard's review layer).
REVIEW = frozenset({"host-files", "host-processes"})

_SYSTEM_TOP = ("etc", "boot", "proc", "sys", "root")
_SYSTEM_TWO = ("var/log", "var/lib", "var/spool", "var/mail")
#: The host's state and kernel views: deleting there goes to review, not to rejection
#: (``rm -rf /var/lib/apt/lists/*`` is an ordinary image cleanup, design 270).
_STATE_DIRS = ("/var/lib/", "/var/spool/", "/var/mail/", "/proc/", "/sys/")
#: The system's program trees: destroying a file there breaks the host, reading it does not.
_PROGRAM_TOP = ("usr", "bin", "sbin", "lib", "lib64", "opt")
#: A path token: absolute, home-relative or climbing out with ``../``.
_PATH = re.compile(r"(?<![\w$/.-])(?:~|\$home|\$\{home\}|(?:\.\./)+|/)[\w./~+-]*", re.I)
#: The host's credential stores (by kind: password databases, privilege rules, key rings,
#: cloud and registry logins).
_CRED_FILE = re.compile(
    r"^/etc/(?:shadow|gshadow|passwd|master\.passwd|sudoers(?:\.d)?|security/opasswd)(?:/|$)|"
    r"^/(?:home/[^/]+|root)/\.(?:ssh|aws|gnupg|kube|docker|azure|config/gcloud)(?:/|$)|"
    r"^/(?:home/[^/]+|root)/\.(?:netrc|pgpass|git-credentials|npmrc|pypirc)$|"
    r"^/(?:etc|usr|var)/.*/(?:passwd|shadow|gshadow|opasswd|passwd\.master|master\.passwd)$"
)
_SHELL_RC = re.compile(r"/\.(?:bashrc|bash_profile|profile|zshrc|zprofile|bash_login)$")

#: Actions on a file, in prose and in code (casefolded raw text).
_DESTROY = re.compile(
    r"(?<![\w.])(?:delete[sd]?|deleting|remove[sd]?|removing|erase[sd]?|wipe[sd]?|unlink(?:s|ed)?|"
    r"truncate[sd]?|overwrite[sd]?|overwriting|shred(?:s|ded)?|corrupt(?:s|ed)?|rm|"
    r"os\.remove|os\.unlink|shutil\.rmtree|rmtree)(?![\w-])|\.(?:unlink|rmdir)\("
)
_WRITE_MODE = re.compile(r"open\([^)\n]{0,80},\s*[rb]?[\"'](?:w|a|wb|ab|w\+|a\+)[\"']")
_APPEND = re.compile(r"(?<![\w.])(?:append(?:s|ed)?|appending|>>|tee -a)(?![\w-])")
_READ = re.compile(
    r"(?<![\w.])(?:read[s]?|reading|print[s]?|printing|cat|head|tail|less|more|show[s]?|"
    r"display[s]?|dump[s]?|output[s]?|cop(?:y|ies|ied|ying)|cp|move[sd]?|mv|open|"
    r"shutil\.copy\w*|exfiltrat\w+|upload[s]?|send[s]?|post[s]?)(?![\w-])|"
    r"(?:^|\s)<\s*[\"']?[$/~.]"  # a shell input redirect reads the file
)
#: Killing the host's processes picked by name or command line, or all of them.
_KILL = re.compile(r"(?<![\w.-])(?:kill(?:s|ed|ing)?|terminat(?:e|es|ed|ing)|pkill|killall)\b")
_PROCESSES = re.compile(r"\bprocess(?:es)?\b")
#: What picks the processes: a name or command line to match, or all of them.
_SELECTOR = re.compile(
    r"\b(?:command lines?|named|by name|matching|related to|associated with|containing|"
    r"with the (?:string|name)|all (?:the )?(?:running )?(?:[^\s.]+ ){0,2}process(?:es)?|every (?:running )?process|"
    r"(?:specific|certain|particular|matching) (?:running )?process(?:es)?)\b"
)
_KILL_CODE = re.compile(
    r"(?<![\w.])(?:pkill|killall)\s|"
    r"process_iter\([\s\S]{0,600}?\.(?:kill|terminate|send_signal)\("
)
#: A shell loop over ``ps``/``pgrep`` output that kills the pids it reads.
_PS = re.compile(r"\b(?:ps\s+-\w+|pgrep)\b")
_KILL_PID = re.compile(r"\bkill\s+(?:-\w+\s+)*[\"']?\$")
_REMOTE_SHELL = re.compile(
    r"\b(?:reverse shell|bind shell|remote shell|remote command listener|"
    r"listens? for (?:incoming |remote )?commands)\b"
)
_FENCE = re.compile(r"```[^\n]*\n([\s\S]*?)(?:```|$)")
#: The unit of prose: a line (a list item, a step, a paragraph's line).
_SENTENCE = re.compile(r"[^\n]+")


@dataclass(frozen=True)
class HostHit:
    code: str
    start: int
    end: int
    note: str


def host_path(token: str) -> str | None:
    """The host path ``token`` names (normalised), or None: not a system or credential path."""
    t = token.rstrip(".,;:")
    low = t.lower()
    for home in ("$home", "${home}", "~"):
        if low.startswith(home):
            low = "/home/user" + low[len(home) :]
    if low.startswith("../"):
        low = "/" + re.sub(r"^(?:\.\./)+", "", low)
    if not low.startswith("/"):
        return None
    p = posixpath.normpath(low)
    if _CRED_FILE.search(p) or _SHELL_RC.search(p):
        return p
    parts = p.strip("/").split("/")
    if parts[0] in _SYSTEM_TOP and len(parts) > 1:
        return p
    if "/".join(parts[:2]) in _SYSTEM_TWO and len(parts) > 2:
        return p
    if parts[0] in _PROGRAM_TOP and len(parts) > 1:
        return p
    return None


def _program(path: str) -> bool:
    return path.strip("/").split("/")[0] in _PROGRAM_TOP


def _paths(text: str) -> list[tuple[int, int, str]]:
    out = []
    for m in _PATH.finditer(text):
        p = host_path(m.group(0))
        if p is not None:
            out.append((m.start(), m.end(), p))
    return out


def _classify(scope: str, path: str, *, destroy: bool = True) -> tuple[str, str] | None:
    """The code and note of an action on ``path`` found in ``scope`` (casefolded);
    ``destroy=False``: only reading or copying counts."""
    cred = _CRED_FILE.search(path) is not None
    writes = destroy and _WRITE_MODE.search(scope) is not None
    if _SHELL_RC.search(path) and (writes or (destroy and _APPEND.search(scope))):
        return "host-files", f"writes the shell start-up file {path}"
    if (destroy and _DESTROY.search(scope)) or (writes and not cred):
        if path.startswith(_STATE_DIRS):  # package lists, spools: caches a cleanup may empty
            return "host-files", f"deletes or overwrites the host's state under {path}"
        return "destructive-command", f"destroys the host file {path}"
    if cred and (writes or _READ.search(scope)):
        return "host-credentials", f"reads, copies or writes the host's credential store {path}"
    if _READ.search(scope) and not _program(path) and not path.startswith("/home/user/"):
        return "host-files", f"reads or copies the host file {path}"
    return None


_ASSIGNED = re.compile(r"^\s*(?:export\s+|local\s+)?([a-z_]\w*)\s*=")


def _code_scope(body: str, at: int) -> str:
    """The lines of a code block that act on what the line at ``at`` holds: that line and
    the lines that use the variable it assigns (two steps: ``p = join(d, t)``)."""
    lines = body.split("\n")
    row = body.count("\n", 0, at)
    picked = {row}
    names: list[str] = []
    frontier = [row]
    for _ in range(2):
        nxt = []
        for r in frontier:
            m = _ASSIGNED.match(lines[r])
            if m is None:
                continue
            names.append(m.group(1))
            use = re.compile(rf"(?<![\w]){re.escape(m.group(1))}(?![\w])")
            for j, line in enumerate(lines):
                if j not in picked and use.search(line):
                    picked.add(j)
                    nxt.append(j)
        frontier = nxt
    return "\n".join(lines[j] for j in sorted(picked))


_PASSIVE = re.compile(r"\b(?:is|are|was|were|be|been|being|gets|got|get)\s+(?:\w+ly\s+)?$", re.I)


def _ordered_prose(raw: str, parsed: list[grammar.Clause], start: int, verb_at: int) -> bool:
    """The sentence opens as an order, the action is not in a condition, a mention, a
    question or a prohibition, and no negation governs it."""
    if not opens_order(raw, start):
        return False
    c = grammar.at(parsed, verb_at)
    if c is not None and c.mood == "mention" and c.text.lstrip()[:1] in "`'\"":
        c = None  # a quoted path is the action's object, not a mention
    if c is not None and c.mood in ("condition", "mention", "question", "prohibition"):
        return False
    return not grammar.negated_at(parsed, raw, verb_at)


def _block_ordered(raw: str, parsed: list[grammar.Clause], fence: int) -> bool:
    """A code block is ordered unless the sentence that introduces it prohibits it."""
    if fence == 0:
        return True
    c = grammar.at(parsed, max(0, fence - 2))
    return c is None or c.mood != "prohibition"


def _active(text: str, matches: Iterable[re.Match[str]]) -> re.Match[str] | None:
    """The first match not in a passive ("needs to be copied", "was read")."""
    return next(
        (m for m in matches if not _PASSIVE.search(text[max(0, m.start() - 30) : m.start()])), None
    )


def _prose_action(
    raw: str, low: str, s: int, ps: int, path: str, lines: list[tuple[int, int]]
) -> tuple[str, str, int] | None:
    """(code, note, where the verb stands) of a prose action on ``path`` (in the line that
    starts at ``s``, ``lines`` being it and the next four): a destroying verb must stand by
    the path; a reading one may follow in a later line that is an order itself ("2. Set p
    to '/etc/x'." / "3. Open p and print it.")."""
    lo = max(s, s + ps - 80)
    near = low[lo : s + ps + len(path) + 40]
    got = _classify(near, path)
    if got is not None and got[0] != "host-files":
        verb = _active(
            near, [*_DESTROY.finditer(near), *_APPEND.finditer(near), *_WRITE_MODE.finditer(near)]
        )
        if verb is not None:
            return got[0], got[1], lo + verb.start()
    for a, b in lines:
        verb = _active(low[a:b], _READ.finditer(low[a:b]))
        if verb is None or (a != s and not opens_order(raw, a + verb.start())):
            continue
        got = _classify(verb.group(0), path, destroy=False)
        if got is not None and a != s:  # a later line: a human looks (the path is not its object)
            got = ("host-files", got[1])
        return (got[0], got[1], a + verb.start()) if got is not None else None
    return None


def host_actions(raw: str) -> list[HostHit]:
    """Every ordered action on the host found in ``raw`` (one per scope and code)."""
    low = raw.lower() if len(raw.lower()) == len(raw) else raw  # offsets must stay raw's
    if not any(w in low for w in ("/", "kill", "terminat", "shell", "listen")):
        return []
    parsed = grammar.parse(raw)
    out: list[HostHit] = []
    blocks: list[tuple[int, int]] = []
    for m in _FENCE.finditer(low):
        s, e = m.start(1), m.end(1)
        blocks.append((m.start(), m.end()))
        if not _block_ordered(raw, parsed, m.start()):
            continue
        body = low[s:e]
        found: set[str] = set()
        for ps, pe, path in _paths(body):
            got = _classify(_code_scope(body, ps), path)
            if got is not None and got[0] not in found:
                found.add(got[0])
                out.append(HostHit(got[0], s + ps, s + pe, got[1]))
        k = _KILL_CODE.search(body) or (_PS.search(body) and _KILL_PID.search(body))
        if k:
            out.append(
                HostHit("host-processes", s + k.start(), s + k.end(), "kills processes by name")
            )
    sentences = [
        (m.start(), m.end())
        for m in _SENTENCE.finditer(low)
        if not any(bs <= m.start() < be for bs, be in blocks)
    ]
    for i, (s, e) in enumerate(sentences):
        sent = low[s:e]
        # a reading action may follow in the next lines ("2. Set p to '/etc/x'.\n3. Print p.")
        for ps, pe, path in _paths(sent):
            hit = _prose_action(raw, low, s, ps, path, sentences[i : i + 5])
            if hit is not None and _ordered_prose(raw, parsed, s + ps, hit[2]):
                out.append(HostHit(hit[0], s + ps, s + pe, hit[1]))
                break
        k = _KILL.search(sent)
        if (
            k
            and _PROCESSES.search(sent)
            and _SELECTOR.search(sent)
            and _ordered_prose(raw, parsed, s + k.start(), s)
        ):
            out.append(
                HostHit("host-processes", s + k.start(), s + k.end(), "kills processes by name")
            )
        r = _REMOTE_SHELL.search(sent)
        if r is not None and _ordered_prose(raw, parsed, s + r.start(), s + r.start()):
            out.append(HostHit("remote-exec", s + r.start(), s + r.end(), "opens a remote shell"))
    return out
