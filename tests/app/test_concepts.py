"""A glossary concept named by its Latin headword or alias, GPU and model names aside (app.concepts)."""

from __future__ import annotations

import pytest

from app.concepts import ConceptNames
from app.services import catalog_names
from gpu.data import GpuData
from infra.settings import REPO_ROOT
from rag.glossary import load_glossary


@pytest.fixture(scope="module")
def concepts() -> ConceptNames:
    return ConceptNames(load_glossary(REPO_ROOT / "data"), catalog_names(GpuData(REPO_ROOT / "data")))


@pytest.mark.parametrize(("text", "name"), [
    ("если запустить обучение через ddp на двух картах, влезет модель побольше?", "ddp"),
    ("does FSDP let me fit a bigger model on 2x 4090?", "fsdp"),
    ("with qlora on a 3060, will it fit?", "qlora"),
])
def test_a_concept_named_in_latin_letters_is_found(concepts: ConceptNames, text: str, name: str) -> None:
    assert concepts.named(text) == name


@pytest.mark.parametrize("text", [
    "влезет ли что-нибудь большое на 4090?",  # a GPU is the catalog's, not a concept asked
    "what fits on an a100 80gb with 80 GB of vram?",  # hardware words every fit question has
    "will llama 3 70b fit on two h100?",
    "ddpm or something",  # a longer word that begins with a name (DDP) is not that name
])
def test_gpus_models_and_hardware_words_name_no_concept(concepts: ConceptNames, text: str) -> None:
    assert concepts.named(text) is None
