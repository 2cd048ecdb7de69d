"""`anchorgpu bench verifier`: the answer verifier measured by mutation testing.

Every sentence of every glossary entry (and of its current English rendering) is mutated the way a small
model gets it wrong (:mod:`dev.eval.mutants`: comparatives turned over, negations flipped, figures changed, a
sibling concept named, Latin names swapped, degenerate sentences) and kept faithful (verbatim, reordered,
shortened, named). Each mutant is given to :class:`rag.verification.sentences.SentenceVerifier` as the small model's
sentence would be: citing its entry as ``[1]``, that entry alone in the context, the question «что такое X?» /
"what is X?", the answer language the mutant's, and the whole glossary known (as the answer service runs it;
``--context-only``: the cited entry alone, as most unit tests call it).

Prints one JSON object per part (``tune`` and ``heldout``, split by a hash of the entry id): per class, the
mutants and the share of wrong ones rejected or of faithful ones accepted (by language too, and which check
rejected them), plus the first accepted wrong mutants and rejected faithful sentences of each class. The
verifier rejects some glossary sentences as they are, and so every mutant of them "for free"; each class also
reports its share over the mutants of sentences the verifier accepts (``of_accepted_sources``), which is what
the mutation itself costs. This only
measures: the targets are reported, nothing is tuned.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dev.bench._report import add_out_argument, emit
from dev.eval.mutants import FAITHFUL_CLASSES, PARTS, WRONG_CLASSES, Mutant, all_mutants, cited, part_of, question_for
from rag.glossary import GlossaryEntry
from rag.verification.sentences import SentenceVerifier

# the targets, on the held-out part: reported next to what the verifier achieves
TARGET_REJECTED = 0.995  # of the wrong mutants, in every class
TARGET_ACCEPTED = 0.85  # of the faithful sentences
EXAMPLES = 10


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    accepted: bool
    reason: str | None  # the check that rejected it
    # whether the sentence it was made from passes (None: made from no sentence). A wrong mutant of a
    # sentence the verifier rejects anyway is rejected for free: the mutation is not what was caught.
    source_accepted: bool | None = None


def sample_mutants(mutants: Sequence[Mutant], per_class: int | None, seed: int = 0) -> list[Mutant]:
    """At most ``per_class`` mutants of each class, drawn with ``seed``, in their original order."""
    if per_class is None:
        return list(mutants)
    rng = random.Random(seed)
    by_class: dict[str, list[int]] = defaultdict(list)
    for index, mutant in enumerate(mutants):
        by_class[mutant.cls].append(index)
    chosen: set[int] = set()
    for indices in by_class.values():
        chosen.update(indices if len(indices) <= per_class else rng.sample(indices, per_class))
    return [mutants[index] for index in sorted(chosen)]


def evaluate(mutants: Sequence[Mutant], glossary: Sequence[GlossaryEntry], context_only: bool = False,
             renderings: Mapping[str, str] | None = None) -> list[Outcome]:
    """Each mutant through the verifier, as the answer service would check the sentence; ``context_only``:
    without the whole glossary, so that only the context's concepts are known (as most unit tests call it)."""
    by_id = {entry.id: entry for entry in glossary}
    verifiers: dict[tuple[str, str], SentenceVerifier] = {}
    sources: dict[tuple[str, str, str], bool] = {}
    outcomes = []
    for mutant in mutants:
        key = (mutant.entry_id, mutant.lang)
        if key not in verifiers:
            entry = by_id[mutant.entry_id]
            verifiers[key] = SentenceVerifier([entry], question_for(entry, mutant.lang), mutant.lang,
                                              glossary=None if context_only else glossary,
                                              renderings=renderings)
        check = verifiers[key].check(cited(mutant.text))
        source_accepted = None
        if mutant.source:
            source_key = (*key, mutant.source)
            if source_key not in sources:
                sources[source_key] = verifiers[key].check(cited(mutant.source)).ok
            source_accepted = sources[source_key]
        outcomes.append(Outcome(mutant, check.ok, check.rejected, source_accepted))
    return outcomes


def _share(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def _class_stats(outcomes: Sequence[Outcome], wrong: bool) -> dict[str, Any]:
    key = "rejected" if wrong else "accepted"
    stats: dict[str, Any] = {"mutants": len(outcomes)}
    good = [not o.accepted if wrong else o.accepted for o in outcomes]
    stats[key] = _share(sum(good), len(outcomes))
    for lang in ("ru", "en"):
        in_lang = [g for o, g in zip(outcomes, good, strict=True) if o.mutant.lang == lang]
        if in_lang:
            stats[lang] = {"mutants": len(in_lang), key: _share(sum(in_lang), len(in_lang))}
    if wrong:
        # the mutation itself caught: only mutants of sentences the verifier accepts as they are
        fair = [not o.accepted for o in outcomes if o.source_accepted]
        if fair:
            stats["of_accepted_sources"] = {"mutants": len(fair), "rejected": _share(sum(fair), len(fair))}
    else:
        derived = [o.accepted for o in outcomes if o.source_accepted and o.mutant.text != o.mutant.source]
        if derived:
            stats["of_accepted_sources"] = {"mutants": len(derived), "accepted": _share(sum(derived), len(derived))}
    reasons = Counter(o.reason for o in outcomes if not o.accepted)
    if reasons:
        stats["rejected_by"] = dict(reasons.most_common())
    return stats


def summarize_part(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    wrong = [o for o in outcomes if o.mutant.wrong]
    faithful = [o for o in outcomes if not o.mutant.wrong]
    classes: dict[str, Any] = {}
    for cls in (*WRONG_CLASSES, *FAITHFUL_CLASSES):
        of_class = [o for o in outcomes if o.mutant.cls == cls]
        if of_class:
            classes[cls] = _class_stats(of_class, cls in WRONG_CLASSES)
    return {
        "entries": len({o.mutant.entry_id for o in outcomes}),
        "mutants": len(outcomes),
        # the degenerate class is the largest and the easiest: the worst class says more than the mean
        "wrong": {"mutants": len(wrong), "rejected": _share(sum(not o.accepted for o in wrong), len(wrong)),
                  "rejected_of_accepted_sources": _share(sum(not o.accepted for o in wrong if o.source_accepted),
                                                         sum(1 for o in wrong if o.source_accepted)),
                  "worst_class_rejected": min((stats["rejected"] for cls, stats in classes.items()
                                               if cls in WRONG_CLASSES), default=None)},
        "faithful": {"mutants": len(faithful), "accepted": _share(sum(o.accepted for o in faithful), len(faithful))},
        "classes": classes,
    }


def _examples(outcomes: Sequence[Outcome], wrong: bool) -> dict[str, list[dict[str, Any]]]:
    """The first accepted wrong mutants (``wrong``) or rejected faithful sentences of each class."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for outcome in outcomes:
        mutant = outcome.mutant
        if mutant.wrong != wrong or outcome.accepted != wrong or len(found[mutant.cls]) >= EXAMPLES:
            continue
        example: dict[str, Any] = {"entry_id": mutant.entry_id, "lang": mutant.lang, "text": mutant.text}
        if not wrong:
            example["reason"] = outcome.reason
        found[mutant.cls].append(example)
    return dict(found)


def summarize(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The report: per part and class, the targets met or not, and examples of what got through."""
    report: dict[str, Any] = {}
    for part in PARTS:
        report[part] = summarize_part([o for o in outcomes if part_of(o.mutant.entry_id) == part])
    heldout = report["heldout"]
    wrong_shares = {cls: stats["rejected"] for cls, stats in heldout["classes"].items() if cls in WRONG_CLASSES}
    report["targets"] = {
        "heldout_wrong_rejected_min": TARGET_REJECTED,
        "heldout_faithful_accepted_min": TARGET_ACCEPTED,
        "classes_below_target": sorted(cls for cls, share in wrong_shares.items()
                                       if share is not None and share < TARGET_REJECTED),
        "faithful_met": (heldout["faithful"]["accepted"] or 0.0) >= TARGET_ACCEPTED,
    }
    report["accepted_wrong"] = _examples(outcomes, wrong=True)
    report["rejected_faithful"] = _examples(outcomes, wrong=False)
    return report


def measure(glossary: Sequence[GlossaryEntry], renderings: Mapping[str, str], memory_figures: Sequence[float],
            sample: int | None = None, seed: int = 0, context_only: bool = False) -> dict[str, Any]:
    """Mutants of the whole glossary (``sample``: at most that many per class), verified and summarized."""
    mutants = all_mutants(glossary, renderings, memory_figures)
    chosen = sample_mutants(mutants, sample, seed)
    report = {"benchmark": "verifier", "sample_per_class": sample, "seed": seed,
              "verifier_knows": "context" if context_only else "glossary", "generated": len(mutants),
              "evaluated": len(chosen)}
    return report | summarize(evaluate(chosen, glossary, context_only, renderings))


def current_renderings(glossary: Sequence[GlossaryEntry], data_dir: Path) -> dict[str, str]:
    """Entry id → its English rendering, where the rendering was made from the entry's current text (the
    answer service shows no other)."""
    from rag.verification.renderings import RENDERINGS_FILE, RenderingsError, load_renderings, source_sha

    try:
        renderings = load_renderings(data_dir / RENDERINGS_FILE)
    except RenderingsError:
        return {}
    return {entry.id: renderings[entry.id].en for entry in glossary
            if entry.id in renderings and renderings[entry.id].source_sha == source_sha(entry.definition)}


def catalog_memory_figures(data_dir: Path) -> list[float]:
    """The memory sizes (GB) of the GPU catalog: the figures a small model mixes up between GPUs."""
    from gpu.data import GpuData

    return sorted({gpu.memory_gb for gpu in GpuData(data_dir).gpus.all()})


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("verifier", help="the answer verifier on mutated glossary sentences")
    parser.add_argument("--sample", type=int, default=None, help="at most N mutants per class (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--context-only", action="store_true",
                        help="verify without the whole glossary (only the cited entry's concept known)")
    add_out_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from infra.settings import get_settings
    from rag.glossary import load_glossary

    data_dir = get_settings().data.data_dir
    glossary = load_glossary(data_dir)
    report = measure(glossary, current_renderings(glossary, data_dir), catalog_memory_figures(data_dir),
                     sample=args.sample, seed=args.seed, context_only=args.context_only)
    emit("verifier", report, args.out)
    return 0
