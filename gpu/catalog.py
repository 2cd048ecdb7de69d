"""The GPU catalog (`data/gpus.yaml`): specs by stable id, and forgiving name resolution.

Ids are a contract shared by /fit and /quote (and the price list), so they never change; everything a
user may type ("H100", "4090", "a100 40gb", "MI300X") goes through :meth:`GPUCatalog.resolve`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz, process

from infra.yamlfile import Text, read_yaml, validate

# Cyrillic letters that look like Latin ones: "А100", "Н100" typed on a Russian layout.
_LOOKALIKES = str.maketrans("авсенкмортхАВСЕНКМОРТХ", "abcehkmoptxABCEHKMOPTX")
_SEPARATORS = re.compile(r"[\s\-_./]+")
# a name typed on a Russian layout by sound: «л40с» is the L40S, «ртх» RTX (read only where a digit says it is a name)
_BY_SOUND = str.maketrans("абвгдезиклмнопрстуфхцАБВГДЕЗИКЛМНОПРСТУФХЦ",
                          "abvgdeziklmnoprstufxcABVGDEZIKLMNOPRSTUFXC")  # «ртх»: the x of RTX
_CYRILLIC = re.compile(r"[а-яёА-ЯЁ]")


def normalize_name(text: str) -> str:
    """Case, spaces, dashes, underscores, Cyrillic look-alikes and a leading vendor are ignored."""
    key = _SEPARATORS.sub("", text.translate(_LOOKALIKES).lower())
    for prefix in ("nvidia", "amd", "geforce"):
        if key.startswith(prefix) and len(key) > len(prefix):
            key = key[len(prefix):]
    return key


@dataclass(frozen=True)
class GPUSpec:
    id: str
    name: str
    vendor: str
    memory_gb: float
    memory_gib: float
    bandwidth_gb_s: float
    bf16_tflops: float | None  # None: no BF16 tensor path (T4, V100)
    fp8_tflops: float | None  # None: no FP8 tensor path
    interconnect: str
    aliases: tuple[str, ...]
    # spec-catalog fields (the glossary answers "how much memory does the H100 have" from these)
    architecture: str = ""
    memory_type: str = ""
    fp16_tflops: float | None = None
    tdp_w: int | None = None
    source: str = ""
    devices_per_card: int = 1  # MI250X: two GCDs, each its own device to a framework

    @property
    def has_nvlink(self) -> bool:
        return "nvlink" in self.interconnect.lower().split("(")[0] or "infinity" in self.interconnect.lower()

    @property
    def supports_fp16(self) -> bool:
        return True  # every catalog GPU has FP16 tensor (or matrix) cores

    @property
    def supports_bf16(self) -> bool:
        return self.bf16_tflops is not None

    @property
    def supports_fp8(self) -> bool:
        return self.fp8_tflops is not None


class UnknownNameError(ValueError):
    """A name that matches nothing; ``suggestions`` holds the closest known ones, best first."""

    def __init__(self, name: str, suggestions: list[str], kind: str = "GPU") -> None:
        self.name = name
        self.suggestions = suggestions
        self.kind = kind
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"Unknown {kind} '{name}'.{hint}")


def _similarity(query: str, choice: str, **_: object) -> float:
    """Edit-distance ratio plus a bonus for a shared prefix: "h10" is closer to "h100" than to "a10"."""
    prefix = 0
    for left, right in zip(query, choice, strict=False):
        if left != right:
            break
        prefix += 1
    return fuzz.ratio(query, choice) + 3.0 * min(prefix, 4)


def suggest(text: str, choices: dict[str, str], limit: int = 3, cutoff: float = 50.0) -> list[str]:
    """Closest canonical names for ``text``; ``choices`` maps normalized spelling -> canonical name."""
    key = normalize_name(text)
    if not key:
        return []
    found: list[str] = []
    for spelling, score, _ in process.extract(key, list(choices), scorer=_similarity, limit=limit * 4):
        canonical = choices[spelling]
        if score >= cutoff and canonical not in found:
            found.append(canonical)
        if len(found) == limit:
            break
    return found


_CARD_OF_MEMORY = re.compile(r"^(\d{1,3})gbcard$")


class GPUCatalog:
    def __init__(self, specs: list[GPUSpec]) -> None:
        self._by_id = {spec.id: spec for spec in specs}
        self._index: dict[str, str] = {}
        for spec in specs:
            for spelling in (spec.id, spec.name, *spec.aliases):
                self._index.setdefault(normalize_name(spelling), spec.id)
        self._choices = dict(self._index)  # normalized spelling -> id

    def all(self) -> list[GPUSpec]:
        return list(self._by_id.values())

    def ids(self) -> list[str]:
        return list(self._by_id)

    def get(self, gpu_id: str) -> GPUSpec:
        try:
            return self._by_id[gpu_id]
        except KeyError:
            raise UnknownNameError(gpu_id, suggest(gpu_id, self._choices)) from None

    def find(self, text: str) -> GPUSpec | None:
        """Exact (normalized) match or None; no fuzzy guessing. "24gb card" (a card named by its memory,
        gpu.request_words.CARD_OF) is the first GPU of the catalog with that much memory."""
        gpu_id = self._index.get(normalize_name(text))
        if gpu_id is None and _CYRILLIC.search(text) and any(ch.isdigit() for ch in text):
            gpu_id = self._index.get(normalize_name(text.translate(_BY_SOUND)))
        if gpu_id is None and (card := _CARD_OF_MEMORY.match(normalize_name(text))):
            return next((spec for spec in self._by_id.values() if spec.memory_gb == int(card.group(1))), None)
        return self._by_id[gpu_id] if gpu_id else None

    def find_named(self, text: str) -> GPUSpec | None:
        """:meth:`find`, or a catalog name in the plural ("h100s", "4090s"; "l40s" is a GPU of its own, found
        first): how free text names GPUs."""
        spec = self.find(text)
        if spec is None and text.endswith("s") and any(ch.isdigit() for ch in text):
            spec = self.find(text[:-1])
        return spec

    def resolve(self, text: str) -> GPUSpec:
        spec = self.find(text)
        if spec is None:
            raise UnknownNameError(text.strip(), suggest(text, self._choices))
        return spec

    def suggestions(self, text: str, limit: int = 3) -> list[str]:
        return suggest(text, self._choices, limit=limit)

    def spellings(self) -> dict[str, str]:
        """Normalized spelling -> id, for every name and alias."""
        return dict(self._index)


class _GpuRow(BaseModel):
    """One GPU of ``gpus.yaml`` (its fields are described in the file's header)."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[Text, Field(min_length=1)]
    name: Text
    vendor: Text
    memory_gb: Annotated[float, Field(gt=0)]
    memory_gib: Annotated[float, Field(gt=0)]
    bandwidth_gb_s: Annotated[float, Field(gt=0)]
    bf16_tflops: float | None = None
    fp8_tflops: float | None = None
    interconnect: Text
    aliases: list[Text] | None = None
    architecture: Text | None = None
    memory_type: Text | None = None
    fp16_tflops: float | None = None  # absent: the BF16 figure
    tdp_w: int | None = None
    source: Text | None = None
    devices_per_card: Annotated[int, Field(ge=1)] | None = None

    def spec(self) -> GPUSpec:
        fp16 = self.fp16_tflops if "fp16_tflops" in self.model_fields_set else self.bf16_tflops
        return GPUSpec(
            id=self.id, name=self.name, vendor=self.vendor, memory_gb=self.memory_gb, memory_gib=self.memory_gib,
            bandwidth_gb_s=self.bandwidth_gb_s, bf16_tflops=self.bf16_tflops, fp8_tflops=self.fp8_tflops,
            interconnect=self.interconnect, aliases=tuple(self.aliases or ()),
            architecture=self.architecture or "", memory_type=self.memory_type or "", fp16_tflops=fp16,
            tdp_w=self.tdp_w, source=self.source or "", devices_per_card=self.devices_per_card or 1)


class _GpuFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpus: list[_GpuRow]


class GpuCatalogError(ValueError):
    """``gpus.yaml`` is invalid; the message names the file, the line and the field."""


def read_gpu_catalog(path: Path) -> GPUCatalog:
    """Parse ``gpus.yaml``; the one reader is :class:`gpu.data.GpuData`."""
    document = read_yaml(path, GpuCatalogError)
    specs = [row.spec() for row in validate(_GpuFile, document, GpuCatalogError).gpus]
    first: dict[str, int] = {}
    owners: dict[str, tuple[str, int]] = {}
    for index, spec in enumerate(specs):
        if spec.id in first:
            raise GpuCatalogError(f"{document.where(('gpus', index, 'id'))}: duplicate GPU id {spec.id!r} "
                                  f"(first at line {document.line(('gpus', first[spec.id], 'id'))})")
        first[spec.id] = index
        # one spelling, one GPU: "l40" must not silently mean the L40S
        for spelling in {normalize_name(s) for s in (spec.id, spec.name, *spec.aliases)}:
            other, _ = owners.setdefault(spelling, (spec.id, index))
            if other != spec.id:
                raise GpuCatalogError(f"{document.where(('gpus', index))}: '{spelling}' names both {other} "
                                      f"and {spec.id}")
    return GPUCatalog(specs)


def load_gpu_catalog(data_dir: Path) -> GPUCatalog:
    """The catalog from ``data_dir/gpus.yaml`` (tools and tests; the app reads it through GpuData)."""
    return read_gpu_catalog(data_dir / "gpus.yaml")
