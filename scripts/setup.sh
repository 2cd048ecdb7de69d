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

# The developer programs (dev/: the benchmarks, the Telegram stub, the glossary generator) are not part of the
# installed package; this venv alone sees the checkout's root, so `anchorgpu bench` reaches dev.bench from any
# folder (an installed wheel or the Docker image has no dev/, and `anchorgpu bench` says so).
SITE_PACKAGES="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
[[ "$(cat "$SITE_PACKAGES/anchorgpu-dev-tree.pth" 2>/dev/null)" == "$ROOT" ]] \
  || printf '%s\n' "$ROOT" > "$SITE_PACKAGES/anchorgpu-dev-tree.pth"

# Models are checked every time (cheap: size + cached digest); assembled only when missing or wrong.
"$VENV/bin/python" -m anchorgpu.provision

# The vectors a first answer would otherwise wait for (the router's bank, the English renderings, the
# phrasings: about a minute of embedding), into the machine's cache that every process and state folder reads.
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False "$VENV/bin/python" -m anchorgpu.warm

# telegram-test-api (npm), a third-party Bot API emulator for tests/e2e/test_third_party_bot_api.py: installed
# from its committed lockfile into the ignored var/npm, again only when the lockfile changes (tests run offline).
# Without npm the step is skipped and that test skips.
NPM_SRC="$ROOT/tests/e2e/telegram_test_api"
NPM_PREFIX="$ROOT/var/npm"
NPM_STAMP="$NPM_PREFIX/.anchorgpu-npm-$(cat "$NPM_SRC/package.json" "$NPM_SRC/package-lock.json" | sha256sum | cut -c1-16)"
if [[ ! -f "$NPM_STAMP" ]]; then
  if command -v npm >/dev/null 2>&1; then
    log "installing telegram-test-api into var/npm (npm ci)"
    mkdir -p "$NPM_PREFIX"
    cp "$NPM_SRC/package.json" "$NPM_SRC/package-lock.json" "$NPM_PREFIX/"
    (cd "$NPM_PREFIX" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    rm -f "$NPM_PREFIX"/.anchorgpu-npm-*
    touch "$NPM_STAMP"
  else
    log "npm not found: skipping telegram-test-api (tests/e2e/test_third_party_bot_api.py will skip)"
  fi
fi
