# GPU deployment image: llama-cpp-python built with CUDA, the same `anchorgpu run` entry point.
# Models and run-time state live on a volume (/app/var); the glossary and catalogs ship in /app/data
# (mount your own over it to curate without rebuilding).
#
#   docker build -t anchorgpu .
#   docker run --gpus all -v anchorgpu-var:/app/var -e TELEGRAM_BOT_TOKEN=... -e LLM_N_GPU_LAYERS=-1 anchorgpu

ARG CUDA_VERSION=12.6.3

FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu24.04 AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
        python3 python3-venv python3-dev build-essential cmake git \
    && rm -rf /var/lib/apt/lists/*
ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH
RUN python3 -m venv $VIRTUAL_ENV && pip install --no-cache-dir --upgrade pip wheel setuptools
# The embedder is small: a CPU torch keeps the image GBs lighter; the LLM is what uses the GPU.
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
# Link against the driver stub at build time; the real libcuda comes from the host at run time.
RUN ln -s /usr/local/cuda/lib64/stubs/libcuda.so /usr/local/cuda/lib64/stubs/libcuda.so.1 \
    && LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs CMAKE_ARGS="-DGGML_CUDA=on -DGGML_NATIVE=OFF" \
       pip install --no-cache-dir --no-binary llama-cpp-python llama-cpp-python==0.3.36
WORKDIR /app
# The product's packages only: dev/ (benchmarks, the Telegram stub, offline tools) and tests/ stay out, and
# pyproject's package list leaves them out of the wheel too (`anchorgpu bench` says so in one line).
COPY pyproject.toml README.md ./
COPY anchorgpu anchorgpu
COPY bot bot
COPY app app
COPY rag rag
COPY gpu gpu
COPY models models
COPY infra infra
RUN pip install --no-cache-dir .

FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends python3 libgomp1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 anchorgpu
ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False \
    ANCHORGPU_DATA_DIR=/app/data ANCHORGPU_STATE_DIR=/app/var \
    LLM_N_GPU_LAYERS=-1 TELEGRAM_HEALTH_PORT=8081
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY data data
RUN mkdir -p /app/var && chown anchorgpu:anchorgpu /app/var
USER anchorgpu
VOLUME ["/app/var"]
EXPOSE 8080 8081
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD python3 -c "import sys,urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8081/healthz', timeout=4).status == 200 else 1)"
# Fetch and verify the default GGUF into the volume when missing, then run the bot.
ENTRYPOINT ["sh", "-c", "python3 -m anchorgpu.provision --without-test-model && exec anchorgpu run"]
