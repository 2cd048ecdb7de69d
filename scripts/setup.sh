#!/usr/bin/env bash
# One idempotent set-up for a fresh clone: .venv, the project, llama-cpp-python built with safe CPU
# flags (or CUDA), and the default models provisioned offline. Fast when everything is already done.
#
#   scripts/setup.sh            # runtime + dev tools (tests, ruff, mypy)
#   LLAMA_CMAKE_ARGS="-DGGML_CUDA=on" scripts/setup.sh   # GPU host
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3.11}"
VENV="$ROOT/.venv"
LLAMA_VERSION="0.3.36"
# A native build picks AMX kernels that segfault on these CPUs (ggml_backend_amx_mul_mat).
DEFAULT_LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
LLAMA_CMAKE_ARGS="${LLAMA_CMAKE_ARGS:-$DEFAULT_LLAMA_CMAKE_ARGS}"
CACHE_DIR="${ANCHORGPU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anchorgpu}"

log() { printf '[setup] %s\n' "$*" >&2; }
# This machine's pip.conf names extra local indexes that may be absent; pip warns once per package.
quiet_pip() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

fingerprint() {
  { cat pyproject.toml scripts/setup.sh; echo "$LLAMA_CMAKE_ARGS"; } | sha256sum | cut -c1-16
}
STAMP="$VENV/.anchorgpu-setup-$(fingerprint)"

if [[ ! -f "$STAMP" ]]; then
  if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating $VENV with $PYTHON"
    "$PYTHON" -m venv "$VENV"
  fi
  PIP=(quiet_pip "$VENV/bin/python" -m pip --disable-pip-version-check)
  "${PIP[@]}" install -q --upgrade "pip>=25" wheel setuptools

  # torch first and pinned: the CPU wheel lies on local disk; an unpinned torch pulls GBs of CUDA.
  "${PIP[@]}" install -q "torch==2.13.0"

  # llama-cpp-python: build once per flag set into a wheel cache, then install from it.
  flags_key="$(echo "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)"
  wheel_dir="$CACHE_DIR/wheels/llama-cpp-python-$LLAMA_VERSION-$flags_key"
  if ! ls "$wheel_dir"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    log "building llama-cpp-python $LLAMA_VERSION (CMAKE_ARGS=$LLAMA_CMAKE_ARGS); about 4 minutes on 2 cores"
    mkdir -p "$wheel_dir"
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" FORCE_CMAKE=1 \
      "${PIP[@]}" wheel -q --no-deps --no-cache-dir --no-binary llama-cpp-python \
      "llama-cpp-python==$LLAMA_VERSION" -w "$wheel_dir"
  fi
  "${PIP[@]}" install -q --no-deps --force-reinstall "$wheel_dir"/llama_cpp_python-*.whl

  log "installing the project and its pinned dependencies"
  "${PIP[@]}" install -q -e ".[dev]"
  rm -f "$VENV"/.anchorgpu-setup-*
  touch "$STAMP"
fi

# Models are checked every time (cheap: size + cached digest); assembled only when missing or wrong.
"$VENV/bin/python" -m anchorgpu.provision
