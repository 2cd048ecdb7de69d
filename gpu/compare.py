"""Catalog GPUs side by side, and which one wins for the job the customer asked about. Data only, no prose.

"Which is faster, H100 or A100?" has no single answer, so the winner is decided per aspect (the job), by one
figure of ``data/gpus.yaml``:

* ``inference`` -> the higher memory bandwidth (``bandwidth_gb_s``). Decoding each token reads every weight
  and the KV cache once, so token generation is bound by memory bandwidth, not by TFLOPS.
* ``training``  -> the higher dense BF16 tensor throughput (``bf16_tflops``); when a compared GPU has no BF16
  path (T4, V100), the dense FP16 figure (``fp16_tflops``) of every compared GPU, so like is compared with like.
* ``memory``    -> the larger memory (``memory_gb``, the marketed capacity).
* ``general``   -> no single winner (``leader`` None); :meth:`GpuComparison.verdict_for` gives each aspect's.

Equal top figures are a tie: no leader, ``tied`` names the GPUs that share the top figure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal, get_args

from gpu.catalog import GPUSpec
from gpu.data import GpuData

Aspect = Literal["inference", "training", "memory", "general"]
ASPECTS: tuple[Aspect, ...] = get_args(Aspect)
DECIDING_ASPECTS: tuple[Aspect, ...] = ("inference", "training", "memory")  # the ones with a winner
Basis = Literal["bandwidth_gb_s", "bf16_tflops", "fp16_tflops", "memory_gb"]

# Word classes, matched from the start of a word; the earliest word in the text decides the aspect.
# "memory bandwidth" / "пропускная способность памяти" is one bandwidth phrase (the inference figure),
# listed first so its "памяти" is not read as a memory-size question.
_ASPECT_WORDS = re.compile(
    r"\b(?:"
    r"(?P<bandwidth>memory\s+bandwidth|bandwidth|пропускн\w*(?:\s+способн\w*)?(?:\s+памят\w*)?)"
    r"|(?P<inference>инференс\w*|inferenc\w*|infer\b|serv(?:e|es|ing)\b|генерац\w*|generat(?:e|es|ion)\b"
    r"|decod\w*|декод\w*|tokens?\s+per\s+second|токен\w*\s+в\s+секунд\w*)"
    r"|(?P<training>обуч\w*|дообуч\w*|тренир\w*|(?:pre-?)?train\w*|fine[\s-]?tun\w*|файн[\s-]?тюн\w*|q?lora\b)"
    r"|(?P<memory>памят\w*|видеопамят\w*|memory|vram|врам\w*)"
    r")"
)
_CLASS_ASPECT: dict[str, Aspect] = {"bandwidth": "inference", "inference": "inference", "training": "training",
                                    "memory": "memory"}


def aspect_asked(text: str) -> Aspect:
    """The job a comparison question is about: «что быстрее для инференса» -> inference, "more VRAM" -> memory;
    "h200 vs h100" (no job word) -> general."""
    match = _ASPECT_WORDS.search(text.lower().replace("ё", "е"))
    if match is None or match.lastgroup is None:
        return "general"
    return _CLASS_ASPECT[match.lastgroup]


@dataclass(frozen=True)
class Verdict:
    """One aspect decided: the figure compared (``basis``), its value per GPU, the winner and by how much."""

    aspect: Aspect
    basis: Basis | None  # None: general
    figures: tuple[float | None, ...]  # the basis value of each GPU, in the order named
    leader: str | None  # None: general, a tie, or figures missing
    runner_up: str | None  # the best of the others: the leader's ratio is against this GPU
    ratio: Decimal | None  # leader's figure / runner-up's, two decimals (ROUND_HALF_UP)
    tied: tuple[str, ...] = ()  # ids sharing the top figure when no one leads


@dataclass(frozen=True)
class GpuComparison:
    gpus: tuple[GPUSpec, ...]  # in the order named
    aspect: Aspect
    prices: tuple[Decimal | None, ...]  # on-demand price per GPU-hour, aligned with gpus; None: not rented
    currency: str
    example_prices: bool  # the price list is an example list (not an offer)
    leader: str | None
    runner_up: str | None
    ratio: Decimal | None
    basis: Basis | None
    figures: tuple[float | None, ...]
    tied: tuple[str, ...]
    # "8x a100 or 4x h100": how many of each GPU, each set decided by its totals (every figure times its count);
    # all 1 when no counts were asked
    counts: tuple[int, ...] = ()

    @property
    def in_sets(self) -> bool:
        return any(count != 1 for count in self.counts)

    def count_of(self, gpu_id: str) -> int:
        return self.counts[self.ids.index(gpu_id)] if self.counts else 1

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(spec.id for spec in self.gpus)

    def spec(self, gpu_id: str) -> GPUSpec:
        return self.gpus[self.ids.index(gpu_id)]

    def price_of(self, gpu_id: str) -> Decimal | None:
        return self.prices[self.ids.index(gpu_id)]

    def verdict(self) -> Verdict:
        """The asked aspect's decision, as a :class:`Verdict`."""
        return Verdict(self.aspect, self.basis, self.figures, self.leader, self.runner_up, self.ratio, self.tied)

    def verdict_for(self, aspect: Aspect) -> Verdict:
        """Any aspect's decision over the same GPUs (a general comparison shows each job's winner)."""
        return decide(self.gpus, aspect, self.counts)


def training_basis(gpus: Sequence[GPUSpec]) -> Basis:
    """BF16 when every GPU has it, else FP16 for all (T4 and V100 train in FP16)."""
    return "bf16_tflops" if all(spec.bf16_tflops is not None for spec in gpus) else "fp16_tflops"


_ASPECT_BASIS: dict[Aspect, Basis] = {"inference": "bandwidth_gb_s", "memory": "memory_gb"}


def _figure(spec: GPUSpec, basis: Basis) -> float | None:
    value: float | None = getattr(spec, basis)
    return value


def _exact(value: float) -> Decimal:
    return Decimal(repr(value))  # repr: the shortest text of the YAML number, not its binary expansion


def decide(gpus: Sequence[GPUSpec], aspect: Aspect, counts: Sequence[int] = ()) -> Verdict:
    """The rule of this module's docstring applied to ``gpus`` (sets of ``counts`` of them: their totals, the
    ideal a job split across the set approaches; communication takes some of it)."""
    if aspect == "general":
        return Verdict(aspect, None, (), None, None, None)
    basis = training_basis(gpus) if aspect == "training" else _ASPECT_BASIS[aspect]
    counts = tuple(counts) or (1,) * len(gpus)
    figures = tuple(None if (value := _figure(spec, basis)) is None else value * count
                    for spec, count in zip(gpus, counts, strict=True))
    known = [(value, spec.id) for spec, value in zip(gpus, figures, strict=True) if value is not None]
    if len(known) < 2:
        return Verdict(aspect, basis, figures, None, None, None)
    top = max(value for value, _ in known)
    best = [gpu_id for value, gpu_id in known if value == top]
    if len(best) > 1:
        return Verdict(aspect, basis, figures, None, None, None, tied=tuple(best))
    second, runner_up = max(((value, gpu_id) for value, gpu_id in known if value < top), key=lambda pair: pair[0])
    ratio = (_exact(top) / _exact(second)).quantize(Decimal("0.01"), ROUND_HALF_UP) if second > 0 else None
    return Verdict(aspect, basis, figures, best[0], runner_up, ratio)


_FASTEST_BASES: dict[Aspect, tuple[Basis, ...]] = {"inference": ("bandwidth_gb_s",), "training": ("bf16_tflops",),
                                                  "memory": ("memory_gb",),
                                                  "general": ("bandwidth_gb_s", "bf16_tflops")}


def fastest_rented(data: GpuData, aspect: Aspect, per_basis: int = 2) -> list[str]:
    """The rented GPUs that lead on what ``aspect`` is decided by ("what's the fastest gpu you have?"): the
    first ``per_basis`` by each deciding figure (bandwidth for inference, dense BF16 for training, both when
    no job is named), in that order, each once; to be compared side by side."""
    rented = [data.gpus.get(gpu_id) for gpu_id in data.prices.rentable_ids()]
    chosen: list[str] = []
    for basis in _FASTEST_BASES[aspect]:
        ranked = sorted(rented, key=lambda spec: (-float(getattr(spec, basis) or 0), spec.id))
        chosen.extend(spec.id for spec in ranked[:per_basis] if spec.id not in chosen)
    return chosen


def compare_gpus(data: GpuData, gpu_ids: Sequence[str], aspect: Aspect, counts: Sequence[int] = ()
                 ) -> GpuComparison:
    """The named catalog GPUs side by side with their on-demand prices, decided for ``aspect``.

    ``gpu_ids`` are catalog ids (resolve what a user typed with ``GPUCatalog.resolve`` first); a repeated id
    counts once. ValueError for fewer than two distinct GPUs or an unknown aspect; an unknown id raises
    ``UnknownNameError`` (a ValueError) with the closest catalog names.
    """
    if isinstance(gpu_ids, str):
        raise TypeError("gpu_ids must be a sequence of ids, not one string")
    if aspect not in ASPECTS:
        raise ValueError(f"unknown aspect {aspect!r}; expected one of {', '.join(ASPECTS)}")
    distinct = list(dict.fromkeys(gpu_ids))
    if counts and (len(counts) != len(gpu_ids) or len(distinct) != len(gpu_ids) or min(counts) < 1):
        raise ValueError("counts must give one positive count for each of the distinct GPUs")
    if len(distinct) < 2:
        raise ValueError(f"a comparison needs at least two different GPUs, got {distinct or 'none'}")
    catalog, prices = data.gpus, data.prices.current()  # one version of each file for the whole answer
    specs = tuple(catalog.get(gpu_id) for gpu_id in distinct)
    hourly = tuple(price.on_demand if (price := prices.price_for(spec.id)) is not None else None for spec in specs)
    verdict = decide(specs, aspect, counts)
    return GpuComparison(
        gpus=specs, aspect=aspect, prices=hourly, currency=prices.currency, example_prices=prices.example,
        leader=verdict.leader, runner_up=verdict.runner_up, ratio=verdict.ratio, basis=verdict.basis,
        figures=verdict.figures, tied=verdict.tied, counts=tuple(counts) or (1,) * len(specs),
    )
