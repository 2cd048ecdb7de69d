"""The GPU spec catalog beyond the rental list: every GPU people ask about, with datasheet fields and a
source; what AnchorGPU rents is exactly what prices.yaml prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu.catalog import GPUCatalog, load_gpu_catalog
from gpu.data import GpuData
from tests.conftest import DATA_DIR
from tests.gpu.test_catalog import CONTRACT_IDS

SPEC_IDS = {
    "t4", "v100-16gb", "v100-32gb", "a10g", "a40", "rtx-a6000", "l4", "l40", "l40s", "a100-40gb", "a100-80gb",
    "h100-pcie", "h100-sxm", "h100-nvl", "h200", "h20", "b200", "rtx-3060-12gb", "rtx-3080", "rtx-3090",
    "rtx-3090-ti", "rtx-4060-ti-16gb", "rtx-4070-ti", "rtx-4080", "rtx-4090", "rtx-5090", "mi210", "mi250x",
    "mi300x", "mi325x",
}


@pytest.fixture(scope="module")
def catalog() -> GPUCatalog:
    return load_gpu_catalog(DATA_DIR)


def test_spec_catalog_covers_the_gpus_people_ask_about(catalog: GPUCatalog) -> None:
    assert set(catalog.ids()) >= SPEC_IDS
    for spec in catalog.all():
        assert spec.source.startswith("https://"), spec.id
        assert spec.architecture and spec.memory_type and spec.tdp_w and spec.tdp_w > 0, spec.id
        assert spec.fp16_tflops and spec.fp16_tflops > 0, spec.id
        assert spec.interconnect, spec.id


def test_rented_is_priced_and_contract_ids_unchanged() -> None:
    data = GpuData(DATA_DIR)
    rentable = set(data.prices.rentable_ids())
    assert rentable == set(data.prices.current().gpus)  # rented <=> priced
    assert rentable >= CONTRACT_IDS
    assert {"rtx-3090", "t4", "b200", "mi325x"}.isdisjoint(rentable)


def test_datasheet_values(catalog: GPUCatalog) -> None:
    # GA102 whitepaper: RTX 3090 24 GB GDDR6X, 936 GB/s, BF16 71 TFLOPS dense, NVLink bridge.
    rtx3090 = catalog.get("rtx-3090")
    assert (rtx3090.memory_gb, rtx3090.bandwidth_gb_s, rtx3090.bf16_tflops) == (24, 936, 71)
    assert rtx3090.has_nvlink and not rtx3090.supports_fp8 and rtx3090.architecture.startswith("Ampere")
    # H100 NVL: 94 GB, 3.9 TB/s; B200: 180 GB, 8 TB/s, 1000 W; MI325X 256 GB, 6 TB/s.
    assert (catalog.get("h100-nvl").memory_gb, catalog.get("h100-nvl").bandwidth_gb_s) == (94, 3900)
    b200 = catalog.get("b200")
    assert (b200.memory_gb, b200.bandwidth_gb_s, b200.tdp_w) == (180, 8000, 1000) and b200.supports_fp8
    assert catalog.get("mi325x").memory_gb == 256
    # Turing and Volta have FP16 tensor cores but no BF16 or FP8.
    for gpu_id in ("t4", "v100-16gb", "v100-32gb"):
        spec = catalog.get(gpu_id)
        assert not spec.supports_bf16 and not spec.supports_fp8 and spec.supports_fp16
    assert catalog.get("t4").memory_gb == 16 and catalog.get("t4").tdp_w == 70
    # Ada and Hopper have FP8; Ampere does not.
    assert catalog.get("rtx-4090").supports_fp8 and catalog.get("l40").supports_fp8
    assert not catalog.get("a100-80gb").supports_fp8 and not catalog.get("a40").supports_fp8


@pytest.mark.parametrize(("text", "expected"), [
    ("3090", "rtx-3090"), ("RTX 3090 Ti", "rtx-3090-ti"), ("t4", "t4"), ("Tesla T4", "t4"), ("v100", "v100-16gb"),
    ("V100 32GB", "v100-32gb"), ("a10g", "a10g"), ("A6000", "rtx-a6000"), ("l40", "l40"), ("h100 nvl", "h100-nvl"),
    ("H20", "h20"), ("b200", "b200"), ("4060 ti", "rtx-4060-ti-16gb"), ("RTX 5090", "rtx-5090"),
    ("mi250x", "mi250x"), ("MI325X", "mi325x"), ("rtx 3060", "rtx-3060-12gb"),
])
def test_resolve_spec_only_gpus(catalog: GPUCatalog, text: str, expected: str) -> None:
    assert catalog.resolve(text).id == expected


def test_one_spelling_names_one_gpu(tmp_path: Path) -> None:
    row = ("  - {{id: {id}, name: {name}, vendor: test, memory_gb: 16, memory_gib: 15.9, bandwidth_gb_s: 100,"
           " bf16_tflops: 10, fp8_tflops: null, interconnect: PCIe, aliases: [{alias}]}}\n")
    (tmp_path / "gpus.yaml").write_text("gpus:\n" + row.format(id="x1", name="X One", alias="x")
                                        + row.format(id="x2", name="X Two", alias="x"), encoding="utf-8")
    with pytest.raises(ValueError, match="names both x1 and x2"):
        load_gpu_catalog(tmp_path)


def test_two_die_card_is_said_so() -> None:
    from tests.conftest import fit_service, notes_en

    catalog = load_gpu_catalog(DATA_DIR)
    assert catalog.get("mi250x").devices_per_card == 2 and catalog.get("mi300x").devices_per_card == 1
    notes = notes_en(fit_service().fit("llama-3.1-70b q4 mi250x"))
    assert any("2 devices of 64 GB" in note for note in notes)
