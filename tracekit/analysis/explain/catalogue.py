"""The catalogue of mistaken metric computations (mistakes.toml beside this file), as data.

A `Mistake` replaces SQL slots with its wrong fragments (or, dimension "unit", scales a rate);
a `Family` is one metric computed per flow from a template whose slots the mistakes fill.
`expand` turns a template and a set of mistakes into SQL; `variants` lists every set of
mistakes (at most one per dimension, at most `max_mistakes`) that changes a family's SQL.
"""
from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tracekit.core.errors import TracekitError

CATALOGUE = Path(__file__).with_name("mistakes.toml")
UNIT_DIMENSION = "unit"
_SLOT = re.compile(r"\{([a-z_]+)\}")
_MISTAKE_KEYS = {"dimension", "title", "explanation", "wrong", "right", "excerpt_wrong", "excerpt_right",
                 "excludes", "also_unscaled", "bits", "prefix_base", "prefix_shift"}


@dataclass(frozen=True)
class Mistake:
    name: str
    dimension: str
    title: str
    explanation: str
    fragments: dict[str, str]              # slot -> wrong SQL fragment
    wrong: str = ""                        # awk, for the docs page
    right: str = ""
    excerpt_wrong: str = ""                # conditions over explain_events picking a trace line
    excerpt_right: str = ""
    excludes: tuple[str, ...] = ()         # dimensions it cannot be combined with
    also_unscaled: bool = False            # the raw value may also be printed without a unit factor
    bits: int = 8                          # unit mistakes: bits per byte counted
    prefix_base: int = 1000                # ... the prefix base actually used
    prefix_shift: int = 0                  # ... and how many prefix steps off the label


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    metric: str                            # the flow_stats column that holds the right value
    to_metric: float                       # raw value x to_metric = the value in that column's unit
    unit_kind: str                         # rate | time | ratio | count
    aggregate: str | None = None           # an expression over explain_events grouped by flow_no
    query: str | None = None               # or a whole query returning (flow_no, value)


@dataclass(frozen=True)
class Catalogue:
    base: str
    slots: dict[str, str]
    families: dict[str, Family]
    mistakes: dict[str, Mistake]
    max_mistakes: int = 3
    dimensions: tuple[str, ...] = field(default=())

    def expand(self, template: str, mistakes: tuple[str, ...] = ()) -> str:
        """template with every {slot} replaced, the mistakes' fragments first, else the correct
        ones, repeatedly (fragments may name slots)."""
        frags = dict(self.slots)
        for m in mistakes:
            frags.update(self.mistakes[m].fragments)
        text = template
        for _ in range(20):
            new = _SLOT.sub(lambda mo: _fragment(frags, mo.group(1)), text)
            if new == text:
                return text
            text = new
        raise TracekitError("mistakes.toml: slots refer to each other in a cycle")

    def family_sql(self, family: Family, mistakes: tuple[str, ...] = ()) -> str:
        return self.expand(family.aggregate if family.aggregate is not None else family.query or "", mistakes)

    def applies(self, family: Family, mistake: str) -> bool:
        """Whether the mistake changes the family's value: a unit mistake applies to rates, any
        other one when it changes the family's SQL."""
        m = self.mistakes[mistake]
        if m.dimension == UNIT_DIMENSION:
            return family.unit_kind == "rate"
        return self.family_sql(family, (mistake,)) != self.family_sql(family)

    def variants(self, family: Family) -> list[tuple[str, ...]]:
        """Every combination of SQL mistakes (not unit ones) for the family: at most one per
        dimension, at most max_mistakes, none a mistake excludes; the empty one (correct) first."""
        by_dim: dict[str, list[str]] = {}
        for name, m in self.mistakes.items():
            if m.dimension != UNIT_DIMENSION and self.applies(family, name):
                by_dim.setdefault(m.dimension, []).append(name)
        dims = sorted(by_dim)
        out: list[tuple[str, ...]] = []
        for choice in itertools.product(*[[None, *by_dim[d]] for d in dims]):
            combo = tuple(c for c in choice if c is not None)
            if len(combo) > self.max_mistakes:
                continue
            used = {self.mistakes[c].dimension for c in combo}
            if any(set(self.mistakes[c].excludes) & (used - {self.mistakes[c].dimension}) for c in combo):
                continue
            out.append(combo)
        out.sort(key=lambda c: (len(c), c))
        return out

    def unit_mistakes(self) -> list[Mistake]:
        return [m for m in self.mistakes.values() if m.dimension == UNIT_DIMENSION]


def _fragment(frags: dict[str, str], name: str) -> str:
    if name not in frags:
        raise TracekitError(f"mistakes.toml: unknown slot {{{name}}}")
    return frags[name]


@lru_cache(maxsize=4)
def load(path: str = str(CATALOGUE)) -> Catalogue:
    """Read and check the catalogue (unknown keys and slots are errors: a typo must not make a
    mistake silently apply nowhere)."""
    try:
        raw = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise TracekitError(f"{path}: {e}") from None
    slots = {k: str(v) for k, v in raw.get("slots", {}).items()}
    families = {}
    for name, f in raw.get("families", {}).items():
        families[name] = Family(name=name, title=f["title"], metric=f["metric"], to_metric=float(f["to_metric"]),
                                unit_kind=f["unit_kind"], aggregate=f.get("aggregate"), query=f.get("query"))
        if (families[name].aggregate is None) == (families[name].query is None):
            raise TracekitError(f"{path}: family {name}: give exactly one of aggregate and query")
    mistakes = {}
    for name, m in raw.get("mistakes", {}).items():
        frags = {k: str(v) for k, v in m.items() if k not in _MISTAKE_KEYS}
        unknown = set(frags) - set(slots)
        if unknown:
            raise TracekitError(f"{path}: mistake {name}: unknown slot(s) {sorted(unknown)}")
        mistakes[name] = Mistake(
            name=name, dimension=m["dimension"], title=m["title"], explanation=m["explanation"], fragments=frags,
            wrong=m.get("wrong", ""), right=m.get("right", ""), excerpt_wrong=m.get("excerpt_wrong", ""),
            excerpt_right=m.get("excerpt_right", ""), excludes=tuple(m.get("excludes", ())),
            also_unscaled=bool(m.get("also_unscaled", False)), bits=int(m.get("bits", 8)),
            prefix_base=int(m.get("prefix_base", 1000)), prefix_shift=int(m.get("prefix_shift", 0)))
    cat = Catalogue(base=raw["base"], slots=slots, families=families, mistakes=mistakes,
                    max_mistakes=int(raw.get("max_mistakes", 3)),
                    dimensions=tuple(sorted({m.dimension for m in mistakes.values()})))
    for fam in families.values():      # every slot resolves
        cat.family_sql(fam)
        for m in mistakes:
            cat.family_sql(fam, (m,))
    return cat
