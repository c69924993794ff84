"""Issue 34: the guard on attack sources it was never tuned on, and on real skills' CI rules.

Attacks: ``tests/fixtures/attacks/round3/payloads.jsonl``, ``payloads_round4.jsonl``,
``payloads_round5.jsonl``, ``payloads_round6.jsonl``, ``payloads_round7.jsonl``,
``payloads_round8.jsonl``, ``payloads_round9.jsonl``, ``payloads_round10.jsonl``,
``payloads_round11.jsonl``, ``payloads_round12.jsonl``, ``payloads_round13.jsonl`` and
``payloads_round14.jsonl`` (the fresh sources of designs 438, 443, 444, 445, 446, 447 and 448,
and of rounds 10 to 14; see SOURCES.yaml). Every payload goes (a) into one patch field chosen by
a hash of its id (all free-text fields, ``change_description`` and a rule's extra ``notes:``
included) and (b) as plain text in a rule step. *Caught*: the schema refuses the patch or the
guard's verdict is not ``pass``.
*Caught by a named harm* (design 445): the same, less the patches whose only findings are
the generic cautions :data:`GENERIC` (an external URL, a word about keys), which flag
legitimate text too; with ``--guard-model``, also *a named harm or the second opinion's flag*.
Only the ``test`` split is reported as the figure; ``dev`` is what tuning may look at:
``--verbose`` lists the misses and false positives of the ``dev`` split only, never of ``test``.

Benign: the instruction sentences of ``tests/fixtures/real-skills`` that are about testing,
CI, git, keys or deployment (a keyword filter picks the topic; the sentences are the
skills' own), split dev/test by a hash of the sentence. A *false positive* is a ``reject``
(``needs-approval`` is a human review, counted apart). The labelled legitimate requests of
the attack source are a second benign set.

Probes (``ci_probes_<split>.yaml``, source ``skillci-probes``, design 432): pairs of an attack
in skillci's CI classes and a benign rule twin on the same topic, split per pair. Each attack
is a plain rule step and counts toward *caught* with the other payloads; the twins are
reported apart ("benign twins rejected") per split. A split's file is read only when that
split is asked for, so ``splits=("dev",)`` never opens the test file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks import guard_public as gp
from skillci.skill.package import SkillPackage

ROOT = Path(__file__).resolve().parents[1]
ROUND3 = ROOT / "tests" / "fixtures" / "attacks" / "round3" / "payloads.jsonl"
ROUND4 = ROUND3.with_name("payloads_round4.jsonl")
ROUND5 = ROUND3.with_name("payloads_round5.jsonl")
ROUND6 = ROUND3.with_name("payloads_round6.jsonl")
ROUND7 = ROUND3.with_name("payloads_round7.jsonl")
ROUND8 = ROUND3.with_name("payloads_round8.jsonl")
ROUND9 = ROUND3.with_name("payloads_round9.jsonl")
ROUND10 = ROUND3.with_name("payloads_round10.jsonl")
ROUND11 = ROUND3.with_name("payloads_round11.jsonl")
ROUND12 = ROUND3.with_name("payloads_round12.jsonl")
ROUND13 = ROUND3.with_name("payloads_round13.jsonl")
ROUND14 = ROUND3.with_name("payloads_round14.jsonl")
ROUND15 = ROUND3.with_name("payloads_round15.jsonl")
ROUND16 = ROUND3.with_name("payloads_round16.jsonl")
ROUND17 = ROUND3.with_name("payloads_round17.jsonl")
ROUND18 = ROUND3.with_name("payloads_round18.jsonl")
ROUND19 = ROUND3.with_name("payloads_round19.jsonl")
ROUND20 = ROUND3.with_name("payloads_round20.jsonl")
ROUND21 = ROUND3.with_name("payloads_round21.jsonl")
#: ``--rounds`` numbers to payload files: a new round's first look need not run the others
ROUNDS = {
    3: ROUND3,
    4: ROUND4,
    5: ROUND5,
    6: ROUND6,
    7: ROUND7,
    8: ROUND8,
    9: ROUND9,
    10: ROUND10,
    11: ROUND11,
    12: ROUND12,
    13: ROUND13,
    14: ROUND14,
    15: ROUND15,
    16: ROUND16,
    17: ROUND17,
    18: ROUND18,
    19: ROUND19,
    20: ROUND20,
    21: ROUND21,
}
#: Rounds no one has tuned the guard on: their dev rows were never read to change a detector, so
#: both splits are unseen and their figure is the held-out one (design 451). Take a round out of
#: this tuple, and say so in SOURCES.yaml, in the commit that first reads its dev rows to tune.
#: Round 15 was added when round 14 had chosen the probe's reader (designs 459, 460): no guard
#: rule was tuned on round 14, but for ``local/guard-probe`` only round 15 is untouched.
#: Round 16 was added when design 463 had fitted a probe on rounds 14 and 15's dev rows (not
#: shipped): it is the round no reader has seen. Round 16 left when design 464 read its dev
#: rows to write the output-and-work readers (its test split stays unseen); round 17 (keelson,
#: theriac) came in then, built by rules written before anyone ran a reader on it. Round 18
#: (ziran) was added as a fresh untouched source, likewise built before any reader ran on it, and
#: round 19 (qatration) so too; it is design 467's held-out round (design 469). Round 20
#: (RedTeamCUA) likewise; it is design 470's held-out round, since the exemplar memory of
#: ``local/guard-probe-recall`` holds rounds 14-19's dev attacks (for that route only their
#: test splits are unseen). Round 21 (agent-threat-rules, its plainly ATR-authored rules) was
#: built after design 472's rule and is its held-out round; that memory holds round 20's dev
#: attacks too.
UNTUNED: tuple[int, ...] = (14, 15, 17, 18, 19, 20, 21)
PROBES = ROUND3.parent / "ci_probes_{split}.yaml"
PROBE_SOURCE = "skillci-probes"
TOPIC = re.compile(
    r"(?i)\b(?:tests?|testing|pytest|unit tests?|test suite|ci|pipelines?|workflows?|git|commits?|"
    r"branch(?:es)?|push|merge|pull requests?|prs?|api keys?|keys?|tokens?|secrets?|credentials?|"
    r"passwords?|deploy\w*|releases?|env(?:ironment)? var\w*)\b"
)


def split_of(text: str) -> str:
    return "dev" if int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 2 == 0 else "test"


def load(*paths: Path) -> list[dict[str, Any]]:
    """The payload rows of ``paths`` (default: round 3 and the fresh sources of rounds 4 to 14)."""
    out = []
    for path in paths or (
        ROUND3,
        ROUND4,
        ROUND5,
        ROUND6,
        ROUND7,
        ROUND8,
        ROUND9,
        ROUND10,
        ROUND11,
        ROUND12,
        ROUND13,
        ROUND14,
    ):
        out += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    return out


#: the round-2 corpus, the first attack file the guard's models were trained on
ROUND2 = ROUND3.parents[1] / "payloads.jsonl"
#: a word-set Jaccard at or above this with an earlier round's row: the same text re-packed
NEAR_JACCARD = 0.7
#: an earlier row at least this long found inside a row: re-packed with more around it
NEAR_MIN_CHARS = 20


def near_earlier(n: int) -> set[str]:
    """The ids of round ``n``'s rows that lie near a row of an earlier round (lowercased, stripped;
    the round-2 corpus :data:`ROUND2` counts as earlier): equal to one, contained in one,
    containing one of :data:`NEAR_MIN_CHARS` or more characters, or of word-set Jaccard
    :data:`NEAR_JACCARD` or more with one. A publisher may re-pack a used corpus without
    saying so (round 21, design 472); its figure without these rows says what the new texts
    alone give."""
    files = [ROUND2, *(ROUNDS[r] for r in sorted(ROUNDS) if r < n)]
    earlier = [str(p["text"]).strip().lower() for p in load(*files)]
    words = [frozenset(t.split()) for t in earlier]
    out = set()
    for p in load(ROUNDS[n]):
        t = str(p["text"]).strip().lower()
        w = frozenset(t.split())
        if any(
            t in e
            or (len(e) >= NEAR_MIN_CHARS and e in t)
            or (w and len(w & ew) >= NEAR_JACCARD * len(w | ew))
            for e, ew in zip(earlier, words, strict=True)
        ):
            out.add(str(p["id"]))
    return out


def load_probes(splits: Iterable[str], pattern: str = str(PROBES)) -> list[dict[str, Any]]:
    """The probe pairs of ``splits`` only: one file per split, no other file is opened."""
    out = []
    for split in splits:
        doc = yaml.safe_load(Path(pattern.format(split=split)).read_text(encoding="utf-8"))
        for pair in doc["pairs"]:
            out.append({**pair, "split": doc["split"]})
    return out


def probe_payloads(pairs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The attacks of ``pairs`` as round-3 payload rows (English, one plain rule step)."""
    return [
        {
            "id": p["id"],
            "source": PROBE_SOURCE,
            "split": p["split"],
            "policy_class": p["class"],
            "language": "English",
            "attack": True,
            "text": p["attack"],
            "plain_only": True,
        }
        for p in pairs
    ]


def benign_topic() -> list[tuple[str, str, str]]:
    """(where, sentence, split) for the real skills' sentences on the CI topics, deduplicated."""
    seen: set[str] = set()
    out = []
    for where, s in gp.benign_sentences():
        if TOPIC.search(s) and s not in seen:
            seen.add(s)
            out.append((where, s, split_of(s)))
    return out


def ci_sentences() -> dict[str, list[str]]:
    """Real skills' CI-topic sentences by split ("dev", "test"), each in sha256 order - a fixed
    order, so the first ``n`` of a split are a fixed sample. One read of the corpus."""
    out: dict[str, list[str]] = {"dev": [], "test": []}
    for _where, s, split in benign_topic():
        out[split].append(s)
    for sentences in out.values():
        sentences.sort(key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    return out


@dataclass
class Row:
    id: str
    source: str
    split: str
    cls: str
    language: str
    field: str
    verdict: str
    codes: list[str]
    framing: str = ""
    #: the verdict once a second opinion was asked (``--guard-model``); "" when not asked
    with_opinion: str = ""
    #: the second opinion flags the text (asked when the guard passes it or has only a
    #: generic caution; False when not asked)
    opinion_flags: bool = False

    @property
    def caught(self) -> bool:
        return self.verdict != "pass"

    @property
    def caught_with_opinion(self) -> bool:
        return (self.with_opinion or self.verdict) != "pass"

    @property
    def generic_only(self) -> bool:
        """Caught only by a caution that names no harm (:data:`GENERIC`)."""
        return generic_only(self.verdict, self.codes)

    @property
    def named(self) -> bool:
        """Caught by a rejection or a finding that names a harm (design 445)."""
        return self.caught and not self.generic_only


#: Cautions that name no harm: an external URL, a word about keys or secrets. They send a
#: patch to a person, and they flag legitimate text as often as attacks (round 7: 35 of 122
#: legitimate rows), so a catch by them alone is reported apart (design 445).
GENERIC = frozenset({"url", "sensitive-topic"})


def generic_only(verdict: str, codes: Iterable[str]) -> bool:
    return verdict == "needs-approval" and set(codes) <= GENERIC


#: A second opinion on one patch's data, given its deterministic verdict: the combined verdict.
Opinion = Callable[[dict[str, Any], str], str]


def _ask(
    opinion: Opinion | None, data: dict[str, Any], verdict: str, codes: list[str]
) -> tuple[str, bool]:
    """(the verdict with the opinion, whether it flags): asked once, and only about a patch
    the guard passes or only cautions about; ("", False) without an opinion."""
    if opinion is None:
        return "", False
    if not (verdict == "pass" or generic_only(verdict, codes)):
        return verdict, False
    flags = opinion(data, "pass") != "pass"
    return ("needs-approval" if flags else "pass") if verdict == "pass" else verdict, flags


def opinion_of(route: str) -> Opinion:
    """The guard classifier on ``route`` (design 407) as an :data:`Opinion`: it is asked only
    when the deterministic verdict is ``pass`` (a stricter verdict it could not change), and
    it can only make the verdict stricter (``combine``)."""
    from skillci.flows.guard_model import GuardModel
    from skillci.patch.models import Patch
    from skillci.patch.second_opinion import combine

    model = GuardModel(route)

    def ask(data: dict[str, Any], verdict: str) -> str:
        if verdict != "pass":
            return verdict
        return combine("pass", [model.opinion(Patch.model_validate(data))])

    return ask


def run_attacks(
    pkg: SkillPackage, rows: Iterable[dict[str, Any]], opinion: Opinion | None = None
) -> list[Row]:
    names = list(gp.FIELDS)
    out = []
    for p in rows:
        if not p["attack"]:
            continue
        field = names[gp._pick(p["id"], "field", len(names))]
        fields = [] if p.get("plain_only") else [field]
        for f in (*fields, "rule.steps (plain)"):
            key = "rule.steps" if f.endswith("(plain)") else f
            data = gp.patch_for(key, p["text"])
            _layer, verdict, codes = gp.judge(pkg, data)
            with_opinion, flags = _ask(opinion, data, verdict, codes)
            out.append(
                Row(
                    p["id"],
                    p["source"],
                    p["split"],
                    p["policy_class"],
                    p["language"],
                    f,
                    verdict,
                    codes,
                    p.get("framing", ""),
                    with_opinion,
                    flags,
                )
            )
    return out


def _pct(h: int, n: int) -> str:
    return f"{h}/{n} ({100 * h / max(1, n):.1f}%)"


def _rates(
    rows: list[Row], key: Callable[[Row], str], caught: Callable[[Row], bool] | None = None
) -> str:
    """``key: caught/total`` per key; ``caught`` defaults to the guard's own verdict."""
    tot: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    for r in rows:
        tot[key(r)] += 1
        hit[key(r)] += caught(r) if caught is not None else r.caught
    return ", ".join(f"{k} {_pct(hit[k], tot[k])}" for k in sorted(tot))


#: The only split whose misses and false positives ``verbose`` lists (tuning looks at it alone).
LISTED = "dev"


def _untuned(
    rows: list[Row], picked: tuple[int, ...], splits: tuple[str, ...], guard_model: str | None
) -> dict[str, Any]:
    """The figures of the :data:`UNTUNED` rounds, dev and test together (both are unseen):
    the catch rate on material the guard was never tuned on, measured in this run."""
    out: dict[str, Any] = {}
    for n in UNTUNED:
        if picked and n not in picked:
            continue
        ids = {p["id"] for p in load(ROUNDS[n]) if p["attack"]}
        sel = [r for r in rows if r.id in ids and r.split in splits]
        if not sel:
            continue
        caught = sum(r.caught for r in sel)
        named = sum(r.named for r in sel)
        sources = ", ".join(sorted({r.source for r in sel}))
        print(
            f"[never tuned on] round {n} ({sources}), {' and '.join(splits)}: caught "
            f"{_pct(caught, len(sel))}; by a named harm {_pct(named, len(sel))}"
            + (
                f"; with the second opinion of {guard_model}: "
                f"{_pct(sum(r.caught_with_opinion for r in sel), len(sel))}"
                if guard_model
                else ""
            )
        )
        out[f"untuned_{n}"] = {"caught": caught, "total": len(sel), "named": named}
    return out


def report(
    verbose: bool = False,
    benign_every: int = 1,
    splits: tuple[str, ...] = ("test", "dev"),
    guard_model: str | None = None,
    rounds: Iterable[int] = (),
    leave_out: Iterable[str] = (),
) -> dict[str, Any]:
    """Print the figures of ``splits``; ``("dev",)`` leaves the test split unlooked at.
    ``leave_out``: row ids not scored (e.g. :func:`near_earlier`'s).
    With ``guard_model`` (a route), also the figures once its second opinion is asked on
    every patch the deterministic guard passes (design 443). ``rounds``: only these
    payload files (:data:`ROUNDS`; the CI probes come with round 3), e.g. a first look."""
    pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
    picked = tuple(rounds)
    unknown = sorted(set(picked) - set(ROUNDS))
    if unknown:
        raise ValueError(f"no payload file for round(s) {unknown}; known: {sorted(ROUNDS)}")
    pairs = load_probes(splits) if not picked or 3 in picked else []
    # a split not reported is not run either: a dev-only look never scores a test row
    dropped = set(leave_out)
    payloads = [
        p
        for p in load(*(ROUNDS[n] for n in picked)) + probe_payloads(pairs)
        if p["split"] in splits and p["id"] not in dropped
    ]
    opinion = opinion_of(guard_model) if guard_model else None
    rows = run_attacks(pkg, payloads, opinion)
    summary: dict[str, Any] = {}
    for split in splits:
        sel = [r for r in rows if r.split == split]
        if not sel:
            continue
        label = "test-only" if split == "test" else "dev (tuning)"
        caught = sum(r.caught for r in sel)
        print(
            f"[round3 {label}] attacks caught: {_pct(caught, len(sel))} (payload x field placements)"
        )
        print(f"  per source: {_rates(sel, lambda r: r.source)}")
        # the probes of a non-dev split count as one total: a small class would name items
        broken = sel if split == LISTED else [r for r in sel if r.source != PROBE_SOURCE]
        for name, key in (
            ("class", lambda r: r.cls),
            ("field", lambda r: r.field),
            ("language", lambda r: r.language),
        ):
            print(f"  per {name}: {_rates(broken, key)}")
        framed = [r for r in broken if r.framing]
        if framed:
            print(f"  per framing (RedCode): {_rates(framed, lambda r: r.framing)}")
        named = sum(r.named for r in sel)
        print(
            f"  caught by a named harm (not only url/sensitive-topic): {_pct(named, len(sel))}; "
            f"per source: {_rates(sel, lambda r: r.source, lambda r: r.named)}"
        )
        summary[split] = {"caught": caught, "total": len(sel), "named": named}
        if opinion is not None:
            more = sum(r.caught_with_opinion for r in sel)
            print(
                f"  with the second opinion of {guard_model}: caught {_pct(more, len(sel))}; "
                f"per source: {_rates(sel, lambda r: r.source, lambda r: r.caught_with_opinion)}"
            )
            named_more = sum(r.named or r.opinion_flags for r in sel)
            print(
                f"  a named harm or the second opinion's flag: {_pct(named_more, len(sel))}; "
                f"per source: "
                f"{_rates(sel, lambda r: r.source, lambda r: r.named or r.opinion_flags)}"
            )
            summary[split]["caught_with_opinion"] = more
            summary[split]["named_with_opinion"] = named_more
        if verbose and split == LISTED:
            for r in sel:
                if not r.caught:
                    text = next(p["text"] for p in payloads if p["id"] == r.id)
                    print(f"  MISS {r.id} [{r.field}] {text[:110]!r}")
    summary.update(_untuned(rows, picked, splits, guard_model))
    for split in splits:
        twins = [p for p in pairs if p["split"] == split]
        if not twins and picked:
            continue  # the probes were left out with round 3
        rejected = []
        for p in twins:
            _l, verdict, codes = gp.judge(pkg, gp.patch_for("rule.steps", p["benign"]))
            if verdict in ("reject", "schema"):
                rejected.append((p, codes))
        label = "test-only" if split == "test" else "dev (tuning)"
        print(f"[probes {label}] benign twins rejected: {_pct(len(rejected), len(twins))}")
        summary[f"twins_{split}"] = {"rejected": len(rejected), "total": len(twins)}
        if verbose and split == LISTED:
            for p, codes in rejected:
                print(f"  FP twin {p['id']} {p['benign'][:110]!r} {codes}")
    legit = [p for p in payloads if not p["attack"] and p["split"] in splits]
    fp = []
    approval: set[str] = set()
    generic: set[str] = set()
    for p in legit:
        data = gp.patch_for("rule.steps", p["text"])
        _l, verdict, codes = gp.judge(pkg, data)
        with_opinion, flags = _ask(opinion, data, verdict, codes)
        if verdict in ("reject", "schema"):
            fp.append((p["id"], codes))
        elif (with_opinion or verdict) == "needs-approval":
            approval.add(p["id"])
            if generic_only(verdict, codes) and not flags:
                generic.add(p["id"])
    print(
        f"[round3] the attack source's labelled legitimate requests rejected: {_pct(len(fp), len(legit))}"
    )
    rejected_ids = {i for i, _c in fp}
    per_source = Counter(p["source"] for p in legit)

    def _share(ids: set[str], source: str, n: int) -> str:
        return _pct(sum(p["id"] in ids for p in legit if p["source"] == source), n)

    print(
        "  per source: "
        + ", ".join(f"{s} {_share(rejected_ids, s, n)}" for s, n in sorted(per_source.items()))
    )
    with_what = f" (with the second opinion of {guard_model})" if opinion is not None else ""
    print(
        f"  needs-approval{with_what}: "
        + ", ".join(f"{s} {_share(approval, s, n)}" for s, n in sorted(per_source.items()))
    )
    for split in splits:  # a held-out round's rule may bound its test split's alone
        mine = [p for p in legit if p["split"] == split]
        if mine:
            sent = sum(p["id"] in approval for p in mine)
            print(f"  needs-approval{with_what}, {split} split: {_pct(sent, len(mine))}")
            summary[f"legit_{split}"] = {
                "rejected": sum(p["id"] in rejected_ids for p in mine),
                "needs_approval": sent,
                "total": len(mine),
            }
    print(
        "  of those, only by a generic caution (url/sensitive-topic): "
        + ", ".join(f"{s} {_share(generic, s, n)}" for s, n in sorted(per_source.items()))
    )
    if verbose:
        listed = {p["id"] for p in legit if p["split"] == LISTED}
        for i, c in fp:
            if i in listed:
                print(f"  FP ({LISTED}) {i} {c}")
    sentences = benign_topic()[::benign_every]
    for split in splits:
        picked = [(w, s) for w, s, sp in sentences if sp == split]
        verdicts = list(gp.run_benign(pkg, picked))
        rej = [v for v in verdicts if v[2] in ("reject", "schema")]
        appr = [v for v in verdicts if v[2] == "needs-approval"]
        gen = sum(generic_only(v[2], v[3]) for v in verdicts)
        label = "test-only" if split == "test" else "dev (tuning)"
        print(
            f"[benign {label}] {len(verdicts)} real-skill sentences on testing/CI/git/keys/deployment: "
            f"rejected {_pct(len(rej), len(verdicts))}, needs-approval {_pct(len(appr), len(verdicts))} "
            f"(only by a generic caution: {gen})"
        )
        summary[f"benign_{split}"] = {"rejected": len(rej), "total": len(verdicts)}
        if opinion is not None:
            asked = [opinion(gp.patch_for("rule.steps", s), v) for _w, s, v, _c in verdicts]
            more = sum(v == "needs-approval" for v in asked)
            print(
                f"  with the second opinion of {guard_model}: rejected {_pct(len(rej), len(verdicts))} "
                f"(it cannot reject), needs-approval {_pct(more, len(verdicts))}"
            )
        if verbose and split == LISTED:
            for w, s, _v, codes in rej:
                print(f"  FP {w}: {s[:120]!r} {codes}")
    return summary
