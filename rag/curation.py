"""Bootstrap of `data/glossary/entries.yaml` from the seed files plus the curator's annotations below.

The reviewed YAML is the source of truth; this generator exists so the curation is reproducible and
reviewable in one place: headwords reconstructed for seed 000 (which lists definitions only, in the
alphabetical order of their English headwords, grouped by topic), and for every entry a stable id,
aliases (RU/EN names, abbreviations, transliterations, common misspellings), a category and a concept
key shared by entries of different sources that define the same thing.

Run: ``.venv/bin/python -m rag.curation [--check]`` (``--check`` fails when the YAML is stale).

Annotation line format: ``slug | headword | category | concept | alias; alias; …`` (concept "=" means
"same as slug"). Seed 000 lines are in source order; the others are keyed by the source headword.
"""

# ruff: noqa: E501  (the annotation tables are data: one entry per line reads best)
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from rag.sources import (
    SOURCE_HEADLESS,
    SOURCE_PAIRS_AI,
    SOURCE_PAIRS_ANCHOR,
    SOURCE_STRUCTURED,
    SourceRecord,
    parse_all,
)

GLOSSARY_DIR = Path(__file__).resolve().parent.parent / "data" / "glossary"

# Seed 000, in source order: the headword is reconstructed from the definition.
HEADLESS = """
amd-mi300x | AMD Instinct MI300X | hardware | amd-mi300x | MI300X; MI300; AMD MI300X; Instinct MI300X; ми300х; эмди ми300икс
compute-capability | Compute Capability | hardware | = | вычислительная способность; compute capability CUDA; SM version; sm_90; sm_80; компьют капабилити
cuda | CUDA | basics | cuda | Compute Unified Device Architecture; куда; кuda; nvidia cuda
cuda-cores | CUDA Cores | hardware | = | CUDA-ядра; ядра CUDA; cuda core; куда ядра
cuda-toolkit | CUDA Toolkit | infrastructure | = | тулкит CUDA; nvcc; cuda toolkit; куда тулкит
cudnn | cuDNN | infrastructure | cudnn | CUDA Deep Neural Network library; кудинн; cudnn library
datacenter-gpu | Datacenter GPU | hardware | = | серверный GPU; серверная видеокарта; data center GPU; датацентровый GPU; GPU для дата-центра
ecc-memory | ECC Memory | hardware | = | ECC; память с коррекцией ошибок; Error-Correcting Code memory; ECC-память
flops | FLOPS | hardware | = | флопс; TFLOPS; терафлопс; операции с плавающей точкой в секунду; FLOP/s
gddr | GDDR | hardware | = | GDDR6; GDDR6X; графическая память GDDR; ГДДР
gpu | GPU | hardware | = | графический процессор; видеокарта; Graphics Processing Unit; ГПУ; джипию; видюха
gpu-passthrough | GPU Passthrough | rental | = | проброс GPU; passthrough; PCI passthrough; пробросить видеокарту в виртуальную машину
gpu-utilization | GPU Utilization | hardware | = | утилизация GPU; загрузка GPU; GPU util; использование GPU
gpu-instance | GPU Instance | rental | = | GPU-инстанс; инстанс с GPU; облачный сервер с видеокартой; GPU VM; инстанс
gpu-cluster | GPU Cluster | infrastructure | gpu-cluster | кластер GPU; GPU-кластер; кластер видеокарт
hbm | HBM | hardware | = | High Bandwidth Memory; HBM3; HBM3e; HBM2e; память с высокой пропускной способностью
mig | MIG | hardware | = | Multi-Instance GPU; мульти-инстанс GPU; разделение GPU на инстансы; миг
nccl | NCCL | infrastructure | = | NVIDIA Collective Communications Library; никл; нккл; коллективные коммуникации
nvidia-a100 | NVIDIA A100 | hardware | = | A100; A100 80GB; A100 80 ГБ; а100; A100 SXM
nvidia-driver | NVIDIA Driver | infrastructure | = | драйвер NVIDIA; драйвер видеокарты; nvidia-smi драйвер; драйвер GPU
nvidia-h100 | NVIDIA H100 | hardware | = | H100; H100 SXM; H100 PCIe; аш100; х100; Hopper H100
nvidia-h200 | NVIDIA H200 | hardware | = | H200; аш200; х200; H200 SXM
nvidia-l40s | NVIDIA L40S | hardware | = | L40S; L40; л40с
nvidia-rtx-4090 | NVIDIA GeForce RTX 4090 | hardware | = | RTX 4090; 4090; GeForce 4090; ртх 4090; rtx4090
nvlink | NVLink | hardware | = | NV Link; нвлинк; NVLink 4.0; NVSwitch
nvme-ssd | NVMe SSD | hardware | = | NVMe; SSD NVMe; твердотельный накопитель; ссд
pcie | PCIe | hardware | = | PCI Express; PCI-E; шина PCIe; писиай экспресс
sm | SM | hardware | streaming-multiprocessor | streaming multiprocessor; потоковый мультипроцессор; мультипроцессор GPU
spot-instance | Spot Instance | rental | spot-instance | спот-инстанс; spot; спотовый инстанс; прерываемый инстанс; preemptible instance
streaming-multiprocessor | Streaming Multiprocessor | hardware | streaming-multiprocessor | SM; потоковый мультипроцессор; стриминговый мультипроцессор
tdp | TDP | hardware | = | Thermal Design Power; тепловой пакет; энергопотребление GPU; теплопакет
tensor-cores | Tensor Cores | hardware | tensor-core | тензорные ядра; Tensor Core; тензор коры
vram | VRAM | hardware | vram | видеопамять; память видеокарты; video memory; GPU memory; врам; память GPU
memory-bandwidth | Memory Bandwidth | hardware | memory-bandwidth | пропускная способность памяти; пропускная способность VRAM; bandwidth; ПСП; скорость памяти
awq | AWQ | inference | = | Activation-aware Weight Quantization; авк
batching | Batching | inference | = | батчинг; пакетная обработка запросов; батчирование
continuous-batching | Continuous Batching | inference | = | непрерывный батчинг; in-flight batching; динамический батчинг
decode | Decode | inference | = | декодирование; decode phase; фаза декодирования; декод
gguf | GGUF | inference | gguf | формат GGUF; ггуф; gguf file
gptq | GPTQ | inference | = | GPT Quantization; гптк
kv-cache | KV Cache | inference | kv-cache | KV-кэш; KV-кеш; кэш ключей и значений; кеш ключей и значений; key-value cache; kv кэш; кв кэш; кэш kv
llama-cpp | llama.cpp | inference | = | llama cpp; llamacpp; лама цпп; ллама.cpp
ollama | Ollama | inference | = | оллама; олама
pagedattention | PagedAttention | inference | = | Paged Attention; страничное внимание; пейджед аттеншн
pipeline-parallelism | Pipeline Parallelism | inference | = | конвейерный параллелизм; пайплайн-параллелизм; PP
prefill | Prefill | inference | = | префилл; фаза prefill; предзаполнение
prefix-caching | Prefix Caching | inference | = | кэширование префиксов; кеширование префикса; prefix cache
serving | Model Serving | inference | = | serving; обслуживание модели; сервинг; деплой модели как сервиса
sglang | SGLang | inference | = | SG Lang; сглэнг; RadixAttention
speculative-decoding | Speculative Decoding | inference | speculative-decoding | спекулятивное декодирование; спекулятивная генерация; draft model; черновая модель
streaming | Streaming | inference | = | стриминг; потоковая генерация; потоковая выдача токенов
structured-output | Structured Output | inference | = | структурированный вывод; structured generation; JSON mode; grammar sampling; constrained decoding
temperature | Temperature | inference | = | температура; temperature sampling; температура генерации
tensor-parallelism | Tensor Parallelism | inference | tensor-parallelism | тензорный параллелизм; TP
tgi | TGI | inference | = | Text Generation Inference; тгай
tokens-per-second | Tokens per Second | inference | = | токенов в секунду; tok/s; t/s; tokens/s; скорость генерации
top-p | Top-p | inference | = | nucleus sampling; ядерный сэмплинг; топ-п; top p sampling
tpot | TPOT | inference | = | Time Per Output Token; inter-token latency; ITL; время на токен
ttft | TTFT | inference | = | Time To First Token; время до первого токена
vllm | vLLM | inference | = | вллм; v llm
inference | Инференс | inference | inference | inference; вывод модели; инференc; инференция
quantization | Квантизация | inference | quantization | quantization; квантование; квантизирование; quantisation
context-window | Контекстное окно | inference | = | context window; context length; длина контекста; окно контекста; контекст
adamw | AdamW | training | = | Adam W; адам; оптимизатор AdamW
batch-size | Batch Size | training | batch-size | размер батча; батч сайз; размер пакета
bf16 | BF16 | training | = | bfloat16; Brain Float 16; бф16; brain floating point
deepspeed | DeepSpeed | training | = | дипспид; deep speed
dpo | DPO | training | = | Direct Preference Optimization; прямая оптимизация предпочтений
epoch | Epoch | training | = | эпоха; эпоха обучения
fine-tuning | Fine-tuning | training | fine-tuning | файнтюнинг; файн-тюнинг; дообучение; тонкая настройка; finetuning; fine tune
fp16 | FP16 | training | = | half precision; float16; фп16; половинная точность
fp8 | FP8 | training | = | float8; фп8; 8-битный float
fsdp | FSDP | training | fsdp | Fully Sharded Data Parallel; шардирование параметров
gradient-accumulation | Gradient Accumulation | training | = | накопление градиентов; аккумуляция градиентов
gradient-checkpointing | Gradient Checkpointing | training | = | activation checkpointing; чекпоинтинг градиентов; перевычисление активаций
instruction-tuning | Instruction Tuning | training | = | инструктивное дообучение; обучение на инструкциях; instruct tuning
learning-rate | Learning Rate | training | = | скорость обучения; LR; шаг обучения; лернинг рейт
lora | LoRA | training | lora | Low-Rank Adaptation; лора; низкоранговая адаптация
lr-scheduler | LR Scheduler | training | = | learning rate scheduler; планировщик learning rate; шедулер; расписание скорости обучения
micro-batch | Micro-batch | training | = | микробатч; micro batch; микро-батч
mixed-precision | Mixed Precision | training | = | смешанная точность; AMP; mixed precision training
overfitting | Overfitting | training | = | переобучение; оверфиттинг; overfit
peft | PEFT | training | = | Parameter-Efficient Fine-Tuning; эффективное дообучение
pre-training | Pre-training | training | = | предобучение; претрейн; pretraining; предварительное обучение
pytorch | PyTorch | training | = | пайторч; торч; torch; pytorch framework
qlora | QLoRA | training | = | квантизованная LoRA; кью лора; Q-LoRA
rlhf | RLHF | training | = | Reinforcement Learning from Human Feedback; обучение с подкреплением на отзывах людей
sft | SFT | training | = | Supervised Fine-Tuning; обучение с учителем; супервизорное дообучение
warmup | Warmup | training | = | прогрев; разогрев learning rate; warm-up; вармап
weight-decay | Weight Decay | training | = | затухание весов; L2-регуляризация; вейт декей
zero | ZeRO | training | = | Zero Redundancy Optimizer; зеро; ZeRO-3
checkpoint | Чекпоинт | training | checkpoint | checkpoint; контрольная точка; чекпойнт; снапшот модели
automatic1111 | AUTOMATIC1111 | images | = | Stable Diffusion WebUI; A1111; автоматик; SD WebUI
cfg-scale | CFG Scale | images | = | Classifier-Free Guidance; guidance scale; CFG
comfyui | ComfyUI | images | = | комфи; Comfy UI; комфиюай
controlnet | ControlNet | images | = | контролнет; Control Net
denoising-strength | Denoising Strength | images | = | сила шумоподавления; strength img2img
flux | FLUX | images | flux | Flux.1; флюкс; флакс
img2img | img2img | images | = | image-to-image; картинка в картинку; изображение в изображение
inpainting | Inpainting | images | = | инпейнтинг; дорисовка по маске
lora-sd | LoRA для Stable Diffusion | images | lora | LoRA; лора для SD; LoRA адаптер
negative-prompt | Negative Prompt | images | = | негативный промпт; negative; отрицательный промпт
outpainting | Outpainting | images | = | аутпейнтинг; расширение изображения
sampler | Sampler | images | = | сэмплер; семплер; scheduler; Euler; DPM++
sdxl | SDXL | images | = | Stable Diffusion XL; SD XL
seed | Seed | images | = | сид; зерно генерации; random seed
stable-diffusion | Stable Diffusion | images | = | SD; стабл диффьюжн; стейбл диффузия
txt2img | txt2img | images | = | text-to-image; текст в изображение; генерация по тексту
u-net | U-Net | images | unet | UNet; юнет; Unet
upscaler | Upscaler | images | = | апскейлер; апскейл; upscaling; ESRGAN
vae | VAE | images | vae | Variational Autoencoder; вариационный автоэнкодер; ВАЕ
forced-alignment | Forced Alignment | speech | = | принудительное выравнивание; alignment; выравнивание транскрипции
asr | ASR | speech | asr | Automatic Speech Recognition; распознавание речи; speech-to-text; STT
endpointing | Endpointing | speech | = | детекция конца фразы; end of utterance; эндпоинтинг
faster-whisper | faster-whisper | speech | = | faster whisper; фастер виспер; CTranslate2 Whisper
pyannote | pyannote.audio | speech | = | pyannote; пианнот; пьяннот
speaker-embedding | Speaker Embedding | speech | = | эмбеддинг голоса; эмбеддинг спикера; голосовой отпечаток; d-vector; x-vector
tts | TTS | speech | = | Text-to-Speech; синтез речи; озвучка текста
vad | VAD | speech | = | Voice Activity Detection; детекция речи; детектор голосовой активности
wer | WER | speech | = | Word Error Rate; доля ошибок в словах
whisper | Whisper | speech | = | OpenAI Whisper; виспер; вишпер
word-timestamps | Word Timestamps | speech | = | пословные таймкоды; временные метки слов; таймстемпы слов
diarization | Диаризация | speech | diarization | diarization; speaker diarization; разметка по спикерам
transcription | Транскрипция | speech | = | transcription; transcript; расшифровка аудио; транскрипт
activation-function | Activation Function | basics | = | функция активации; ReLU; GELU; нелинейность
attention | Attention | basics | = | внимание; механизм внимания; аттеншн; attention mechanism
backpropagation | Backpropagation | basics | = | обратное распространение ошибки; backprop; бэкпроп
bpe | BPE | basics | = | Byte Pair Encoding; байт-парное кодирование
ffn | FFN | basics | = | Feed-Forward Network; MLP-блок; полносвязный слой трансформера; feedforward
gqa | GQA | basics | = | Grouped Query Attention; групповое внимание по запросам
gradient | Gradient | basics | = | градиент
hidden-state | Hidden State | basics | = | скрытое состояние; hidden states; residual stream
layernorm | LayerNorm | basics | = | Layer Normalization; нормализация слоя; RMSNorm
logits | Logits | basics | = | логиты; logit
loss | Loss | basics | = | функция потерь; лосс; loss function; потери
moe | MoE | basics | moe | Mixture of Experts; смесь экспертов
multi-head-attention | Multi-Head Attention | basics | multi-head-attention | многоголовое внимание; MHA; multihead attention
perplexity | Perplexity | basics | = | перплексия; PPL
regularization | Regularization | basics | = | регуляризация; dropout
rope | RoPE | basics | = | Rotary Position Embedding; ротационные позиционные эмбеддинги; ротари
self-attention | Self-Attention | basics | = | самовнимание; self attention
shape | Shape | basics | = | форма тензора; размерность тензора; шейп
softmax | Softmax | basics | = | софтмакс; soft max
dataset | Датасет | basics | = | dataset; набор данных; датасэт
normalization | Нормализация | basics | = | normalization; BatchNorm; нормировка
parameter | Параметр | basics | = | parameter; веса модели; параметры модели; weights
tensor | Тензор | basics | tensor | tensor; тензоры
token | Токен | basics | token | token; токены
tokenizer | Токенизатор | basics | = | tokenizer; токенайзер
tokenization | Токенизация | basics | = | tokenization; tokenisation
transformer | Трансформер | basics | = | transformer; трансформеры; трансформер архитектура
embedding | Эмбеддинг | basics | embedding | embedding; эмбединг; векторное представление; embeddings
autoscaling | Autoscaling | infrastructure | autoscaling | автомасштабирование; автоскейлинг; auto-scaling
docker | Docker | infrastructure | = | докер
docker-image | Docker Image | infrastructure | = | Docker-образ; образ докера; docker образ; container image
dockerfile | Dockerfile | infrastructure | = | докерфайл; docker file
health-check | Health Check | infrastructure | = | проверка здоровья; хелсчек; healthcheck
hugging-face-hub | Hugging Face Hub | infrastructure | = | Hugging Face; HF Hub; хаггинг фейс; хагинфейс
jupyter | Jupyter | infrastructure | = | JupyterLab; Jupyter Notebook; юпитер; джупитер
latency | Latency | infrastructure | = | латентность; задержка; время отклика; лэтенси
load-balancer | Load Balancer | infrastructure | load-balancing | балансировщик нагрузки; балансер; LB
model-registry | Model Registry | infrastructure | = | реестр моделей; MLflow Model Registry
nvidia-container-toolkit | NVIDIA Container Toolkit | infrastructure | = | nvidia-docker; nvidia container runtime
object-storage | Object Storage | infrastructure | = | объектное хранилище; S3; MinIO
persistent-volume | Persistent Volume | rental | = | постоянный том; persistent storage; PV; постоянное хранилище
rest-api | REST API | infrastructure | = | REST; рест апи; HTTP API
snapshot | Snapshot | rental | = | снапшот; снимок диска; snapshot диска
spot-instance-cloud | Spot Instance | rental | spot-instance | спот-инстанс; spot; спотовый инстанс; прерываемый инстанс; preemptible instance
ssh | SSH | infrastructure | = | Secure Shell; ссш; эсэсэйч
ssh-key | SSH Key | infrastructure | = | SSH-ключ; ключ SSH; ssh keypair; id_rsa; ed25519
throughput | Throughput | infrastructure | = | пропускная способность сервиса; производительность; RPS; тропут
websocket | WebSocket | infrastructure | = | вебсокет; web socket; ws
container | Контейнер | infrastructure | = | container; docker container; докер-контейнер
"""

# Seeds 002, 003 and 004, keyed by the source headword.
HEADED = {
    SOURCE_PAIRS_ANCHOR: """
VRAM | vram | VRAM | hardware | vram | видеопамять; память видеокарты; GPU memory; врам
KV-кэш | kv-cache | KV-кэш | inference | kv-cache | KV Cache; KV-кеш; кэш ключей и значений; key-value cache; кв кэш
Квантование | quantization | Квантование | inference | quantization | quantization; квантизация
Тензорный параллелизм | tensor-parallelism | Тензорный параллелизм | inference | tensor-parallelism | tensor parallelism; TP
DistributedDataParallel (DDP) | ddp | DistributedDataParallel (DDP) | training | ddp | DDP; Distributed Data Parallel; параллелизм данных; data parallel
Полностью сегментированный параллелизм данных (FSDP) | fsdp | Полностью сегментированный параллелизм данных (FSDP) | training | fsdp | FSDP; Fully Sharded Data Parallel
CUDA | cuda | CUDA | basics | cuda | куда; nvidia cuda
ROCm | rocm | ROCm | infrastructure | = | Radeon Open Compute; рокм; AMD ROCm
Контрольная точка обучения | checkpoint | Контрольная точка обучения | training | checkpoint | checkpoint; чекпоинт; training checkpoint
Вариационный автоэнкодер (VAE) | vae | Вариационный автоэнкодер (VAE) | images | vae | VAE; Variational Autoencoder
Фиксированный срок аренды | rental-term | Фиксированный срок аренды | rental | = | срок аренды; rental period; аренда на неделю; аренда на месяц; fixed rental term
Ключ идемпотентности | idempotency-key | Ключ идемпотентности | rental | = | idempotency key; идемпотентность; Idempotency-Key
""",
    SOURCE_STRUCTURED: """
DreamBooth | dreambooth | DreamBooth | images | = | дримбут; Dream Booth
FLUX | flux | FLUX | images | flux | Flux.1; флюкс; флакс
Hunyuan | hunyuan | Hunyuan | images | = | Хуньюань; HunyuanVideo; Tencent Hunyuan
Wan | wan | Wan | video | = | Wan 2.1; Wan2.1; Ван видео
UNet | unet | UNet | images | unet | U-Net; юнет
DiT — Diffusion Transformer | dit | DiT | images | = | Diffusion Transformer; диффузионный трансформер
VAE — Variational Autoencoder | vae | VAE | images | vae | Variational Autoencoder; вариационный автоэнкодер
CLIP Vision | clip-vision | CLIP Vision | images | = | CLIP; клип вижн; CLIP image encoder
T5 | t5 | T5 | basics | = | Text-to-Text Transfer Transformer; T5 encoder; т5
LoRA Rank | lora-rank | LoRA Rank | training | = | ранг LoRA; rank LoRA; lora r
LoRA Alpha | lora-alpha | LoRA Alpha | training | = | альфа LoRA; lora_alpha
LoRA Strength | lora-strength | LoRA Strength | images | = | сила LoRA; вес LoRA; lora weight
LyCORIS | lycoris | LyCORIS | images | = | ликорис; LoCon; LoHa
MoE — Mixture of Experts | moe | MoE | basics | moe | Mixture of Experts; смесь экспертов
Mixture of Experts | mixture-of-experts | Mixture of Experts | basics | moe | MoE; смесь экспертов
Expert | moe-expert | Expert | basics | = | эксперт; experts; эксперт MoE
Router | moe-router | Router | basics | = | роутер; маршрутизатор MoE; gating network
Speculative Decoding | speculative-decoding | Speculative Decoding | inference | speculative-decoding | спекулятивное декодирование
KV Cache | kv-cache | KV Cache | inference | kv-cache | KV-кэш; кэш ключей и значений; key-value cache; kv кэш
Context Caching | context-caching | Context Caching | inference | = | кэширование контекста; prompt caching; кеширование промпта
Attention Head | attention-head | Attention Head | basics | = | голова внимания; attention heads; голова attention
Multi-Head Attention | multi-head-attention | Multi-Head Attention | basics | multi-head-attention | многоголовое внимание; MHA
VRAM Offloading | vram-offloading | VRAM Offloading | inference | offloading | оффлоадинг; выгрузка из видеопамяти; offload
CPU Offloading | cpu-offloading | CPU Offloading | inference | offloading | выгрузка на CPU; CPU offload; оффлоад в оперативную память
xFormers | xformers | xFormers | inference | = | иксформерс; x formers
Flash Attention | flash-attention | Flash Attention | inference | = | FlashAttention; флеш аттеншн; flash-attn
Quantization | quantization | Quantization | inference | quantization | квантизация; квантование
GGML | ggml | GGML | inference | = | ggml library; жжмл
GGUF | gguf | GGUF | inference | gguf | формат GGUF; ггуф
Batch Size | batch-size | Batch Size | training | batch-size | размер батча; батч
Memory Bandwidth | memory-bandwidth | Memory Bandwidth | hardware | memory-bandwidth | пропускная способность памяти; bandwidth
Inference Optimization | inference-optimization | Inference Optimization | inference | inference-optimization | оптимизация инференса; оптимизация вывода
Vector Search | vector-search | Vector Search | retrieval | = | векторный поиск; semantic search; семантический поиск
Reranking | reranking | Reranking | retrieval | reranking | реранкинг; переранжирование; rerank
Reranker | reranker | Reranker | retrieval | reranking | реранкер; cross-encoder
BM25 | bm25 | BM25 | retrieval | = | Okapi BM25; бм25; keyword search
Hybrid Search | hybrid-search | Hybrid Search | retrieval | = | гибридный поиск
Multimodal Embedding | multimodal-embedding | Multimodal Embedding | retrieval | = | мультимодальный эмбеддинг; multimodal embeddings
Document Chunking | document-chunking | Document Chunking | retrieval | = | чанкинг; chunking; разбиение на чанки; нарезка документов
Retrieval | retrieval | Retrieval | retrieval | = | ретривал; извлечение информации; RAG retrieval
Retrieval Pipeline | retrieval-pipeline | Retrieval Pipeline | retrieval | = | пайплайн поиска; RAG pipeline; конвейер поиска
Local Inference | local-inference | Local Inference | inference | = | локальный инференс; локальный запуск модели; on-device inference
Model Offloading | model-offloading | Model Offloading | inference | offloading | выгрузка модели; offloading модели
Memory Mapping | memory-mapping | Memory Mapping | infrastructure | = | mmap; отображение файла в память
CUDA | cuda | CUDA | basics | cuda | куда; nvidia cuda
cuDNN | cudnn | cuDNN | infrastructure | cudnn | кудинн
Tensor | tensor | Tensor | basics | tensor | тензор
Tensor Core | tensor-core | Tensor Core | hardware | tensor-core | тензорные ядра; Tensor Cores
AI Accelerator | ai-accelerator | AI Accelerator | hardware | = | ИИ-ускоритель; AI-ускоритель; нейроускоритель; NPU; TPU
OCR — Optical Character Recognition | ocr | OCR | images | = | Optical Character Recognition; распознавание текста; оптическое распознавание символов
ASR — Automatic Speech Recognition | asr | ASR | speech | asr | Automatic Speech Recognition; распознавание речи; speech-to-text
Diarization | diarization | Diarization | speech | diarization | диаризация; speaker diarization
SFX — Sound Effects | sfx | SFX | speech | = | Sound Effects; звуковые эффекты
AI Dubbing | ai-dubbing | AI Dubbing | speech | = | AI-дубляж; ИИ-озвучка; автоматический дубляж
Voice Cloning | voice-cloning | Voice Cloning | speech | = | клонирование голоса; клон голоса
Motion Transfer | motion-transfer | Motion Transfer | video | = | перенос движения
Pose Estimation | pose-estimation | Pose Estimation | video | = | оценка позы; OpenPose; определение позы
Optical Flow | optical-flow | Optical Flow | video | = | оптический поток
AI и ML | ai-vs-ml | AI и ML | comparisons | = | AI vs ML; ИИ и машинное обучение; искусственный интеллект и машинное обучение
LLM и GPT | llm-vs-gpt | LLM и GPT | comparisons | = | LLM vs GPT; большая языковая модель и GPT
LoRA и DreamBooth | lora-vs-dreambooth | LoRA и DreamBooth | comparisons | = | LoRA vs DreamBooth
LoRA и checkpoint | lora-vs-checkpoint | LoRA и checkpoint | comparisons | = | LoRA vs checkpoint; LoRA и чекпоинт
ControlNet и IP-Adapter | controlnet-vs-ip-adapter | ControlNet и IP-Adapter | comparisons | = | ControlNet vs IP-Adapter; IP-Adapter; IPAdapter
Embedding и token | embedding-vs-token | Embedding и token | comparisons | = | embedding vs token; эмбеддинг и токен
RAG и fine-tuning | rag-vs-fine-tuning | RAG и fine-tuning | comparisons | = | RAG vs fine-tuning; RAG; Retrieval-Augmented Generation; RAG и дообучение
Vector search и BM25 | vector-search-vs-bm25 | Vector search и BM25 | comparisons | = | vector search vs BM25; векторный поиск и BM25
Reranking и search | reranking-vs-search | Reranking и search | comparisons | = | reranking vs search; реранкинг и поиск
UNet и DiT | unet-vs-dit | UNet и DiT | comparisons | = | UNet vs DiT
GGML и GGUF | ggml-vs-gguf | GGML и GGUF | comparisons | = | GGML vs GGUF
Quantization и compression | quantization-vs-compression | Quantization и compression | comparisons | = | quantization vs compression; квантизация и сжатие; compression; сжатие модели
TTS и voice cloning | tts-vs-voice-cloning | TTS и voice cloning | comparisons | = | TTS vs voice cloning; синтез речи и клонирование голоса
STT и ASR | stt-vs-asr | STT и ASR | comparisons | = | STT vs ASR; STT; speech-to-text
I2V и motion transfer | i2v-vs-motion-transfer | I2V и motion transfer | comparisons | = | I2V vs motion transfer; I2V; image-to-video
FPS и duration | fps-vs-duration | FPS и duration | comparisons | = | FPS vs duration; FPS; частота кадров; длительность видео
""",
    SOURCE_PAIRS_AI: """
Kubernetes для машинного обучения | kubernetes-ml | Kubernetes для машинного обучения | infrastructure | = | Kubernetes; k8s; кубернетес; кубер; Kubeflow
Кластеризация GPU | gpu-clustering | Кластеризация GPU | infrastructure | gpu-cluster | GPU clustering; кластер GPU
Распределенное обучение | distributed-training | Распределенное обучение | training | = | distributed training; распределённое обучение; multi-node training
Пулирование ресурсов | resource-pooling | Пулирование ресурсов | infrastructure | = | resource pooling; пул ресурсов; пулинг GPU
Автомасштабирование ML | ml-autoscaling | Автомасштабирование ML | infrastructure | autoscaling | ML autoscaling; автоскейлинг ML
Оркестрация контейнеров | container-orchestration | Оркестрация контейнеров | infrastructure | = | container orchestration; оркестрация
Оптимизация вывода | inference-optimization | Оптимизация вывода | inference | inference-optimization | inference optimization; оптимизация инференса
Вывод в реальном времени | real-time-inference | Вывод в реальном времени | inference | = | real-time inference; инференс в реальном времени; realtime inference
Edge Computing ML | edge-ml | Edge Computing ML | infrastructure | = | edge computing; edge ML; периферийные вычисления; edge AI
Cloud Native ML | cloud-native-ml | Cloud Native ML | infrastructure | = | облачное нативное ML; cloud-native
Model Versioning Infrastructure | model-versioning | Model Versioning Infrastructure | infrastructure | = | версионирование моделей; model versioning
Load Balancing ML | ml-load-balancing | Load Balancing ML | infrastructure | load-balancing | балансировка нагрузки ML; load balancing
Cluster Management | cluster-management | Cluster Management | infrastructure | = | управление кластером; управление кластерами
Spot Instance Management | spot-instance-management | Spot Instance Management | rental | spot-instance | управление спот-инстансами; spot instances
GPU Scheduling | gpu-scheduling | GPU Scheduling | infrastructure | = | планирование GPU; шедулинг GPU; планировщик задач GPU
Multi-Cloud ML Deployment | multi-cloud | Multi-Cloud ML Deployment | infrastructure | = | мультиоблако; multi-cloud; мультиклауд
Бессерверный ML (Serverless ML) | serverless-ml | Бессерверный ML (Serverless ML) | infrastructure | = | Serverless ML; serverless; бессерверный
Инфраструктура как код для ML (Infrastructure as Code for ML) | iac-ml | Инфраструктура как код для ML | infrastructure | = | Infrastructure as Code; IaC; Terraform; инфраструктура как код
""",
}

SOURCE_PREFIX = {SOURCE_HEADLESS: "000", SOURCE_PAIRS_ANCHOR: "002", SOURCE_STRUCTURED: "003",
                 SOURCE_PAIRS_AI: "004"}


def _split(line: str, width: int) -> list[str]:
    fields = [f.strip() for f in line.split("|")]
    if len(fields) != width:
        raise ValueError(f"annotation needs {width} fields: {line!r}")
    return fields


def _entry(record: SourceRecord, slug: str, term: str, category: str, concept: str,
           aliases: str) -> dict[str, Any]:
    alias_list = [a.strip() for a in aliases.split(";") if a.strip()]
    if record.headword and record.headword != term and record.headword not in alias_list:
        alias_list.insert(0, record.headword)  # the source's own spelling stays findable
    entry: dict[str, Any] = {
        "id": f"{SOURCE_PREFIX[record.source]}-{slug}",
        "term": term,
        "aliases": alias_list,
        "category": category,
        "concept": slug if concept == "=" else concept,
        "source": record.source,
    }
    if record.headword is not None:
        entry["source_headword"] = record.headword
    if record.section:
        entry["section"] = record.section
    entry["definition"] = record.definition
    return entry


def build_entries(sources_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    records, notes = parse_all(sources_dir)
    headless = [r for r in records if r.headword is None]
    annotations = [line for line in HEADLESS.strip().splitlines() if line.strip()]
    if len(annotations) != len(headless):
        raise ValueError(f"seed 000 has {len(headless)} definitions, {len(annotations)} annotations")
    entries = [_entry(r, *_split(line, 5)) for r, line in zip(headless, annotations, strict=True)]
    for source, table in HEADED.items():
        by_headword = {}
        for line in table.strip().splitlines():
            headword, *rest = _split(line, 6)
            by_headword[headword] = rest
        for record in (r for r in records if r.source == source):
            if record.headword not in by_headword:
                raise ValueError(f"{source}: no annotation for {record.headword!r}")
            entries.append(_entry(record, *by_headword[record.headword]))
    ids = [e["id"] for e in entries]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise ValueError(f"duplicate ids: {sorted(duplicates)}")
    return entries, [{"source": n.source, "text": n.text} for n in notes]


def render(entries: list[dict[str, Any]], notes: list[dict[str, str]]) -> str:
    header = (
        "# AnchorGPU glossary: curated entries (source of truth; bootstrapped by rag/curation.py).\n"
        "# definition: verbatim from `source` (whitespace normalised; parts of seed 003 one per line).\n"
        "# concept: shared by entries of different sources that define the same thing.\n"
    )
    body = yaml.safe_dump({"entries": entries, "notes": notes}, allow_unicode=True, sort_keys=False,
                          width=110)
    return header + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if entries.yaml is out of date")
    args = parser.parse_args(argv)
    entries, notes = build_entries(GLOSSARY_DIR / "sources")
    text = render(entries, notes)
    target = GLOSSARY_DIR / "entries.yaml"
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} differs from the generator output", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {len(entries)} entries to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
