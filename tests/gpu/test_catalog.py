"""The GPU catalog: contract ids, datasheet values, alias resolution and "did you mean"."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu.catalog import GPUCatalog, GpuCatalogError, GPUSpec, UnknownNameError, load_gpu_catalog
from tests.conftest import DATA_DIR

CONTRACT_IDS = {"h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "l40s", "rtx-4090", "mi300x"}


@pytest.fixture(scope="module")
def catalog() -> GPUCatalog:
    return load_gpu_catalog(DATA_DIR)


def test_contract_ids_present(catalog: GPUCatalog) -> None:
    assert set(catalog.ids()) >= CONTRACT_IDS
    for spec in catalog.all():
        assert isinstance(spec, GPUSpec)
        # The device-visible total never exceeds the marketed capacity converted to GiB.
        assert 0.9 * spec.memory_gb * 1e9 / 2**30 < spec.memory_gib <= spec.memory_gb * 1.0001
        assert spec.bandwidth_gb_s > 0 and (spec.bf16_tflops is None or spec.bf16_tflops > 0)
        assert spec.fp8_tflops is None or spec.fp8_tflops > (spec.bf16_tflops or 0)


def test_datasheet_values(catalog: GPUCatalog) -> None:
    # NVIDIA H100 datasheet: SXM 80 GB, 3.35 TB/s, BF16 989.4 dense, FP8 1,979 dense, NVLink 900 GB/s.
    h100 = catalog.get("h100-sxm")
    assert (h100.memory_gb, h100.bandwidth_gb_s, h100.bf16_tflops, h100.fp8_tflops) == (80, 3350, 989.4, 1979)
    assert "NVLink" in h100.interconnect
    # NVIDIA H200 datasheet: 141 GB, 4.8 TB/s.
    assert (catalog.get("h200").memory_gb, catalog.get("h200").bandwidth_gb_s) == (141, 4800)
    # NVIDIA A100 datasheet: 40 GB 1,555 GB/s, 80 GB 2,039 GB/s, no FP8.
    assert catalog.get("a100-40gb").bandwidth_gb_s == 1555
    assert catalog.get("a100-80gb").bandwidth_gb_s == 2039
    assert catalog.get("a100-80gb").fp8_tflops is None
    # vLLM #12330 start-up log: A100-40GB device total 39.50 GiB.
    assert catalog.get("a100-40gb").memory_gib == pytest.approx(39.50)
    # AMD MI300X data sheet: 192 GB, 5.3 TB/s.
    assert (catalog.get("mi300x").memory_gb, catalog.get("mi300x").bandwidth_gb_s) == (192, 5300)
    # L40S and RTX 4090 have no NVLink.
    assert "no NVLink" in catalog.get("l40s").interconnect
    assert "no NVLink" in catalog.get("rtx-4090").interconnect
    assert catalog.get("rtx-4090").memory_gb == 24


@pytest.mark.parametrize(("text", "expected"), [
    ("h100", "h100-sxm"),
    ("H100 SXM", "h100-sxm"),
    ("nvidia h100", "h100-sxm"),
    ("h100 pcie", "h100-pcie"),
    ("H200", "h200"),
    ("4090", "rtx-4090"),
    ("RTX 4090", "rtx-4090"),
    ("rtx_4090", "rtx-4090"),
    ("a100", "a100-80gb"),
    ("A100-40GB", "a100-40gb"),
    ("a100 40gb", "a100-40gb"),
    ("А100 40GB", "a100-40gb"),  # Cyrillic "А" typed on a Russian layout
    ("л40с", "l40s"), ("ртх 4090", "rtx-4090"), ("в100", "v100-16gb"),  # typed by sound on a Russian layout
    ("mi300x", "mi300x"),
    ("MI300X", "mi300x"),
    ("L40S", "l40s"),
    ("  l40s  ", "l40s"),
    ("rtx 6000 ada", "rtx-6000-ada"),
])
def test_resolve_aliases(catalog: GPUCatalog, text: str, expected: str) -> None:
    assert catalog.resolve(text).id == expected


@pytest.mark.parametrize(("text", "expected_first"), [
    ("h10", "h100-sxm"),
    ("mi300", "mi300x"),  # alias, resolves; kept here to assert no error
    ("l40", "l40"),  # the L40 is its own GPU now, not a typo of the L40S
    ("l40x", "l40s"),
    ("a1000", "a100-80gb"),
])
def test_did_you_mean(catalog: GPUCatalog, text: str, expected_first: str) -> None:
    try:
        spec = catalog.resolve(text)
    except UnknownNameError as exc:
        assert exc.name == text
        assert expected_first in exc.suggestions
        assert "Did you mean" in str(exc)
        assert len(exc.suggestions) == len(set(exc.suggestions)) <= 3
    else:
        assert spec.id == expected_first


def test_unknown_without_suggestions(catalog: GPUCatalog) -> None:
    with pytest.raises(UnknownNameError) as info:
        catalog.resolve("zzzzqqq")
    assert info.value.suggestions == []
    with pytest.raises(UnknownNameError):
        catalog.get("h100")  # get() takes ids only


def test_custom_data_dir(tmp_path: Path) -> None:
    (tmp_path / "gpus.yaml").write_text(
        "gpus:\n  - {id: x1, name: X One, vendor: test, memory_gb: 16, memory_gib: 15.9, bandwidth_gb_s: 100,"
        " bf16_tflops: 10, fp8_tflops: null, interconnect: PCIe, aliases: [ex1]}\n",
        encoding="utf-8",
    )
    catalog = load_gpu_catalog(tmp_path)
    assert catalog.resolve("EX1").id == "x1"
    assert catalog.get("x1").fp8_tflops is None


SHIPPED_GPUS = (DATA_DIR / "gpus.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(("old", "new", "field", "what"), [
    ("    memory_gib: 79.65        # [h100] 81,559 MiB", "    memory_gib: lots", "gpus[0].memory_gib",
     "valid number"),
    ("    bandwidth_gb_s: 3350     # [h100]", "    bandwidth_gb_s: 0", "gpus[0].bandwidth_gb_s", "greater than 0"),
    ("    tdp_w: 700", "    tdp: 700", "gpus[0].tdp", "unknown field"),
    ("    vendor: nvidia", "    vendor: [nvidia]", "gpus[0].vendor", "valid string"),
])
def test_a_broken_gpus_file_names_the_file_the_line_and_the_field(tmp_path: Path, old: str, new: str,
                                                                  field: str, what: str) -> None:
    text = SHIPPED_GPUS.replace(old, new, 1)
    assert text != SHIPPED_GPUS
    (tmp_path / "gpus.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        load_gpu_catalog(tmp_path)
    line = text.splitlines().index(new) + 1
    assert str(caught.value).startswith(f"{tmp_path / 'gpus.yaml'}, line {line}: {field}: "), str(caught.value)
    assert what in str(caught.value) and ";" not in str(caught.value)


def test_a_duplicate_gpu_id_names_both_lines(tmp_path: Path) -> None:
    text = SHIPPED_GPUS.replace("  - id: h100-pcie\n", "  - id: h100-sxm\n", 1)
    (tmp_path / "gpus.yaml").write_text(text, encoding="utf-8")
    lines = text.splitlines()
    first = lines.index("  - id: h100-sxm") + 1
    second = lines.index("  - id: h100-sxm", first) + 1
    with pytest.raises(GpuCatalogError, match=rf"gpus\.yaml, line {second}: gpus\[1\]\.id: duplicate GPU id "
                                              rf"'h100-sxm' \(first at line {first}\)"):
        load_gpu_catalog(tmp_path)


def test_the_shipped_catalog_reads_every_field(catalog: GPUCatalog) -> None:
    h100 = catalog.get("h100-sxm")
    assert (h100.memory_gib, h100.tdp_w, h100.architecture, h100.fp16_tflops) == (79.65, 700, "Hopper GH100", 989.4)
    assert "h100 sxm5" in h100.aliases and catalog.get("mi250x").devices_per_card == 2


@pytest.mark.parametrize(("text", "expected"), [("h100s", "h100-sxm"), ("4090s", "rtx-4090"), ("a100s", "a100-80gb"),
                                                ("l40s", "l40s"), ("l40", "l40"), ("gpus", None), ("specs", None)])
def test_free_text_names_a_gpu_in_the_plural(catalog: GPUCatalog, text: str, expected: str | None) -> None:
    """"l40s" is the L40S itself, found before any plural is tried; a word with no digit is no GPU's plural."""
    found = catalog.find_named(text)
    assert (found.id if found else None) == expected
