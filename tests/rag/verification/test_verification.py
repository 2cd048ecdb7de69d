"""Claim-level checks on the glossary itself: the model's known wrong answers are rejected, the right
ones pass. Every case here is a sentence the default 0.5B model wrote, or its correct counterpart."""

from __future__ import annotations

import pytest

from rag.glossary import GlossaryEntry, load_glossary
from rag.language import Lang, is_yes_no_question
from rag.verification.renderings import RENDERINGS_FILE, load_renderings, source_sha
from rag.verification.sentences import SentenceVerifier, same_root
from rag.verification.stream import SentenceStream
from tests.conftest import DATA_DIR

GLOSSARY = load_glossary(DATA_DIR)
ENTRIES = {entry.id: entry for entry in GLOSSARY}
# what English sentences are aligned with: the curated renderings of the entries' current text
_CURATED = load_renderings(DATA_DIR / RENDERINGS_FILE)
RENDERINGS = {entry.id: rendering.en for entry in GLOSSARY
              if (rendering := _CURATED.get(entry.id)) is not None
              and rendering.source_sha == source_sha(entry.definition)}


def context(*ids: str) -> list[GlossaryEntry]:
    return [ENTRIES[i] for i in ids]


def verifier_of(entries: list[GlossaryEntry], question: str, lang: Lang | None = None,
                **options: object) -> SentenceVerifier:
    """The verifier as the answer service builds it: with the entries' English renderings."""
    return SentenceVerifier(entries, question, lang, renderings=RENDERINGS, **options)  # type: ignore[arg-type]


CASES = [
    # (context, question, sentence, rejected reason or None)
    (("000-nvidia-h100",), "сколько памяти у H100?", "H100 имеет 16 ГБ памяти [1].", "unsupported"),
    (("000-nvidia-h100",), "сколько памяти у H100?", "H100 имеет 16 ГБ памяти HBM3 и поддержку FP8 [1].", "number"),
    (("000-tensor-parallelism", "000-pipeline-parallelism"), "чем tensor parallel отличается от pipeline parallel",
     "Tensor Parallelism — распределение слоёв модели по разным GPU [1].", "swapped"),
    (("000-tensor-parallelism", "000-pipeline-parallelism"), "чем tensor parallel отличается от pipeline parallel",
     "Tensor Parallelism — разбиение тензоров модели по нескольким GPU внутри одного слоя [1].", None),
    (("002-ddp", "002-fsdp"), "what is the difference between DDP and FSDP",
     "DDP is a fully sharded data parallel method [1].", "unsupported"),
    (("002-ddp", "002-fsdp"), "what is the difference between DDP and FSDP",
     "DDP runs model replicas in several processes and synchronizes gradients [1].", None),
    (("002-rental-term",), "можно ли остановить аренду и не платить за оставшуюся неделю?",
     "Остановка смоделированного размещения приостанавливает оплаченный период [1].", "polarity"),
    (("002-rental-term",), "можно ли остановить аренду и не платить за оставшуюся неделю?",
     "Остановка смоделированного размещения не приостанавливает оплаченный период [1].", None),
    (("000-gradient-checkpointing",), "what does gradient checkpointing trade off",
     "Gradient checkpointing trades off accuracy and speed [1].", "unsupported"),
    # written by the default model in `anchorgpu bench answers`
    (("000-gradient-checkpointing",), "gradient checkpointing хранит все активации?",
     "Gradient checkpointing хранит все активации в памяти [1].", "claim"),
    # the same claim to a question that does not ask yes or no: the source stores "вместо хранения"
    (("000-gradient-checkpointing",), "что gradient checkpointing делает с активациями?",
     "Gradient checkpointing хранит активации в памяти [1].", "polarity"),
    # written by the default model: its support was the question's words (VRAM Offloading's entry says
    # "at the cost of speed", nothing of activations or the backward pass); the question restated
    (("003-vram-offloading",), "как сэкономить память на активациях ценой лишних вычислений при обратном проходе?",
     "Чтобы сэкономить память на активациях ценой лишних вычислений при обратном проходе, можно использовать "
     "VRAM Offloading [1].", "echo"),
    (("000-kv-cache",), "как не пересчитывать ключи и значения внимания на каждом шаге генерации?",
     "Не пересчитывать ключи и значения внимания на каждом шаге генерации [1].", "echo"),
    # a yes/no question restated is an affirmation, which the polarity check judges (written by the model)
    (("000-fp16",), "нужен ли loss scaling при обучении в FP16?", "Для обучения в FP16 требуется loss scaling [1].",
     None),
    # what it adds is the entry's: it passes
    (("000-gradient-checkpointing",), "как сэкономить память на активациях ценой лишних вычислений?",
     "Можно перевычислять активации при backward pass вместо их хранения в памяти: это Gradient "
     "Checkpointing [1].", None),
]


@pytest.mark.parametrize(("ids", "question", "sentence", "reason"), CASES)
def test_known_wrong_sentences_are_rejected_and_right_ones_pass(ids: tuple[str, ...], question: str,
                                                                sentence: str, reason: str | None) -> None:
    check = verifier_of(context(*ids), question).check(sentence)
    assert (check.rejected is None) == (reason is None), check  # the reason names the first failed check


def test_a_yes_the_cited_text_does_not_state_is_never_shown() -> None:
    verifier = verifier_of(context("002-rental-term"), "можно ли остановить аренду и не платить?")
    assert verifier.check("Да, остановка смоделированного размещения не приостанавливает оплаченный период [1].") \
        .rejected == "yes_no"
    assert is_yes_no_question("Can I pause billing?") and is_yes_no_question("можно ли не платить?")
    assert not is_yes_no_question("что такое NVLink?")


def test_a_sentence_about_x_supported_only_by_y_is_rejected() -> None:
    verifier = verifier_of(context("000-tensor-parallelism", "000-pipeline-parallelism"), "?")
    # the words are the pipeline entry's, the subject is tensor parallelism, the citation points at pipeline
    check = verifier.check("Tensor Parallelism обрабатывает разные микробатчи одновременно [2].")
    assert check.rejected is not None


def test_streaming_releases_only_complete_verified_sentences_renumbered() -> None:
    stream = SentenceStream(verifier_of(context("000-pipeline-parallelism", "000-tensor-parallelism"), "?"))
    shown = [stream.feed(part) for part in ("Tensor Parallelism — разбиение тензоров модели по нескольким ",
                                            "GPU внутри одного слоя [2]. Погода сегодня ", "хорошая [1]. ")]
    shown.append(stream.flush())
    text = "".join(shown)
    assert shown[0] == "" and "разбиение тензоров" in shown[1]  # nothing before the sentence is complete
    assert "Погода" not in text  # the unsupported sentence never appears
    assert text.strip().endswith("слоя [1].") and stream.answer.cited == [2]
    assert [check.rejected for check in stream.answer.rejected] == ["unsupported"]


def test_a_definition_that_puts_its_subject_in_the_wrong_class_is_rejected() -> None:
    # 003's entry says "BM25 не является нейросетью. Он относится к традиционным методам поиска…": the
    # model's sentence restates the second and negates the first (written by the default model)
    verifier = verifier_of(context("003-bm25"), "является ли BM25 нейросетью?")
    check = verifier.check("BM25 — это нейросеть, относится к традиционным методам поиска [1].")
    assert check.rejected is not None, check
    assert verifier.check("BM25 не является нейросетью и относится к традиционным методам поиска [1].").ok
    # a class no cited entry names
    assert verifier.check("BM25 — это трансформер для текстового поиска [1].").rejected in ("class", "unsupported")


def test_an_english_sentence_does_not_answer_a_russian_question() -> None:
    question = "нужен ли loss scaling при обучении в FP16?"
    english = "Loss scaling is necessary for training in FP16 [1]."
    assert verifier_of(context("000-fp16"), question, "ru").check(english).rejected == "language"
    assert verifier_of(context("000-fp16"), question, "en").check(english).rejected != "language"
    russian = "FP16 требует loss scaling из-за узкого диапазона [1]."
    assert verifier_of(context("000-fp16"), question, "ru").check(russian).rejected != "language"


def test_an_answer_in_another_language_than_its_entry_is_not_held_to_the_entrys_words() -> None:
    # what an English sentence adds cannot be in a Russian entry's words: the echo check does not apply
    verifier = verifier_of(context("000-fp16"), "what does FP16 training require?", "en")
    assert verifier.check("FP16 training requires loss scaling to avoid underflow [1].").rejected != "echo"
    russian = verifier_of(context("000-fp16"), "что нужно для обучения в FP16?", "ru")
    assert russian.check("Для обучения в FP16 нужно [1].").rejected == "echo"


# Written by the default model to questions outside the labelled set, each shown as verified before the
# checks below existed: a yes/no question restated as its own answer, a concept outside the context named
# as the subject, a figure of one GPU given as a model's requirement. With each, a right answer that passes.
GLOSSARY_CASES = [
    (("000-gradient-checkpointing",), "gradient checkpointing делает обучение быстрее?",
     "Gradient checkpointing делает обучение быстрее [1].", "claim"),
    (("000-gradient-checkpointing",), "does gradient checkpointing make training faster?",
     "Gradient checkpointing makes training faster [1].", "claim"),
    (("003-speculative-decoding",), "does speculative decoding use a bigger draft model?",
     "Speculative decoding uses a bigger draft model [1].", "claim"),
    (("000-gddr",), "HBM медленнее GDDR?", "HBM медленнее GDDR — потому что GDDR — более доступный аналог HBM [1].",
     "claim"),
    (("000-mixed-precision",), "is BF16 more precise than FP16?", "BF16 is more precise than FP16 [1].", "subject"),
    (("000-pagedattention",), "PagedAttention хранит KV-кэш в смежных блоках памяти?",
     "PagedAttention хранит KV-кеш в смежных блоках памяти [1].", "claim"),
    (("002-ddp",), "DDP шардирует параметры модели?", "DDP (DistributedDataParallel) шардирует параметры модели [1].",
     "subject"),
    (("000-fp16",), "нужен ли loss scaling для BF16?", "Для BF16 требуется loss scaling при обучении [1].", "subject"),
    (("000-nvidia-h200",), "сколько памяти нужно для llama 3 70b?",
     "LLama 3 70b требует примерно 141 ГБ памяти HBM3e [1].", "subject"),
    (("000-nvidia-h200",), "сколько памяти нужно для llama 3 70b?",
     "141 ГБ памяти HBM3e для работы с крупными языковыми моделями [1].", "subject"),
    (("000-hbm",), "HBM быстрее GDDR?", "HBM быстрее GDDR [1].", "claim"),
    (("002-ddp", "002-fsdp"), "а FSDP?", "Репликация не объединяет память устройств в один непрерывный пул [1].",
     "subject"),
    # a figure of the entry measuring something else: 30 days is not a 30 % discount, 900 GB/s is not 900 GB
    (("002-rental-term",), "какая скидка за месяц аренды?", "Скидка за месяц аренды составляет 30% [1].", "number"),
    (("000-nvlink",), "какая пропускная способность у NVLink?", "NVLink обеспечивает 900 ГБ памяти [1].", "number"),
    # one concept described with another's entry, which only mentions it; a premise or a cause of its own
    (("000-gddr",), "почему HBM быстрее GDDR?", "HBM — это более доступный аналог HBM [1].", "subject"),
    (("000-gddr",), "почему HBM быстрее GDDR?", "HBM — это более доступный аналог GDDR [1].", "swapped"),
    (("000-gddr",), "почему HBM быстрее GDDR?", "GDDR — это более доступный аналог HBM [1].", None),
    (("000-gddr",), "why is GDDR faster than HBM?", "GDDR is faster than HBM because it is more affordable [1].",
     "claim"),
    (("002-ddp",), "почему DDP шардирует параметры?",
     "DDP шардирует параметры, чтобы синхронизировать градиенты [1].", "claim"),
    (("003-batch-size",), "почему батч большего размера требует больше памяти?",
     "Батч большего размера требует больше памяти, так как он увеличивает эффективность вычислений [1].", "claim"),
    # right answers
    (("002-rental-term",), "а в месяце?", "Месяц аренды составляет ровно 30 дней [1].", None),
    (("000-nvlink",), "какая пропускная способность у NVLink?", "NVLink обеспечивает до 900 ГБ/с [1].", None),
    (("002-ddp",), "DDP объединяет память нескольких GPU в один пул?",
     "DDP не объединяет память устройств в один непрерывный пул [1].", None),
    (("000-zero",), "ZeRO дублирует параметры на каждом GPU?",
     "ZeRO — алгоритм DeepSpeed, устраняющий дублирование параметров между GPU [1].", None),
    (("000-fp16",), "нужен ли loss scaling при обучении в FP16?", "Для обучения в FP16 требуется loss scaling [1].",
     None),
    (("000-mig",), "MIG — это технология AMD?",
     "MIG — это технология NVIDIA для аппаратного разделения одного GPU [1].", None),
    (("000-nvlink",), "для чего нужен NVLink?",
     "NVLink — высокоскоростная межсоединительная шина NVIDIA между GPU с пропускной способностью до 900 ГБ/с [1].",
     None),
    (("000-checkpoint",), "как сохранить прогресс обучения, чтобы потом продолжить?",
     "Чекпоинт — сохранённое состояние модели и оптимизатора в определённый момент обучения [1].", None),
    # true, but in words of its own ("similar" for the rendering's "analogous"): a sentence is shown only in
    # its source's words (rag.verification.alignment), and the entry is quoted instead
    (("000-fsdp",), "what is FSDP similar to?", "FSDP is a PyTorch implementation similar to ZeRO-3 [1].",
     "unsupported"),
    (("000-fsdp",), "what is FSDP similar to?", "FSDP is a PyTorch implementation, analogous to ZeRO-3 [1].", None),
]


@pytest.mark.parametrize(("ids", "question", "sentence", "reason"), GLOSSARY_CASES)
def test_claims_are_judged_against_the_whole_glossary(ids: tuple[str, ...], question: str, sentence: str,
                                                      reason: str | None) -> None:
    check = verifier_of(context(*ids), question, glossary=GLOSSARY).check(sentence)
    assert (check.rejected is None) == (reason is None), check  # the reason names the first failed check


def test_a_russian_question_without_a_question_word_asks_yes_or_no() -> None:
    assert is_yes_no_question("DDP шардирует параметры модели?") and is_yes_no_question("аренду можно заморозить?")
    assert not is_yes_no_question("как работает continuous batching?")
    assert not is_yes_no_question("bf16 или fp16 — что лучше?") and not is_yes_no_question("HBM vs GDDR")


def test_word_families_count_as_the_entrys_words_and_negated_stems_do_not() -> None:
    assert same_root("требоваться", "требовать") and same_root("разделить", "разделение")
    assert same_root("хранить", "хранение")
    assert not same_root("смежный", "несмежный") and not same_root("повышать", "понижать")


def test_a_sentence_written_twice_is_shown_once() -> None:
    stream = SentenceStream(verifier_of(context("000-nvlink"), "для чего нужен NVLink?"))
    sentence = "NVLink — высокоскоростная межсоединительная шина NVIDIA между GPU [1]. "
    text = stream.feed(sentence + sentence) + stream.flush()
    assert text.count("шина NVIDIA") == 1 and not stream.answer.rejected


def test_a_stream_stalls_on_its_first_failed_claim_not_on_a_lead_in_or_the_question_restated() -> None:
    question = "we need to turn hundreds of hours of recorded calls into searchable text. what's that tech called?"
    stream = SentenceStream(verifier_of(context("000-nvlink"), question))
    stream.feed("Here is the answer:\n1. We need to turn hundreds of hours of recorded calls into searchable text. ")
    assert len(stream.answer.rejected) >= 2 and not stream.stalled, "a lead-in, a number, the question: no claim"
    stream.feed("Bananas grow on tall trees in warm countries. ")
    assert stream.stalled
    shown = SentenceStream(verifier_of(context("000-nvlink"), "для чего нужен NVLink?"))
    shown.feed("NVLink — высокоскоростная межсоединительная шина NVIDIA между GPU [1]. Бананы растут на пальмах. ")
    assert shown.answer.rejected and not shown.stalled, "once a sentence has passed, the answer is under way"


def test_the_models_guillemets_are_not_shown_as_the_glossarys() -> None:
    check = verifier_of(context("002-quantization"), "что такое квантование?").check(
        "Квантование — «представление некоторых значений модели с пониженной числовой точностью» [1].")
    assert check.ok and "«" not in check.text and "»" not in check.text


def test_a_question_is_not_an_answer() -> None:
    # written by SmolLM2-135M in `anchorgpu bench answers`, each citing an entry it copied words from
    verifier = verifier_of(context("002-rental-term"), "а в месяце?", glossary=GLOSSARY)
    assert verifier.check("Сколько дней в неделе аренды [1]?").rejected == "echo"


def test_a_follow_up_is_about_what_the_turn_before_named() -> None:
    # «а сколько VRAM ей нужно?» after «что такое QLoRA?», answered with VRAM Offloading's words
    verifier = verifier_of(context("003-vram-offloading", "000-qlora"), "а сколько VRAM ей нужно?",
                                glossary=GLOSSARY, about="что такое QLoRA?")
    sentence = "Для чего нужно: позволяет запускать более крупные модели на видеокартах с ограниченным объёмом [1]."
    assert verifier.check(sentence).rejected == "subject"
    assert verifier.check("QLoRA снижает требования к VRAM до ~8 ГБ [2].").ok


# the three sentences a new user was shown as verified (issue: generated sentences that cannot say the
# opposite); each is one of the mutant classes of `anchorgpu bench verifier` (comparative_swap, degenerate)
@pytest.mark.parametrize(("ids", "question", "sentence"), [
    (("003-batch-size",), "как выбрать размер батча, чтобы не упереться в память?",
     "Использование меньшего размера batch: Это может повысить эффективность вычислений, но требует меньше "
     "памяти [1]."),
    (("000-quantization",), "how does quantization affect model quality?",
     "Quantization is reducing the precision of numerical parameters, which can lead to increased VRAM and "
     "improved inference speed [1]."),
    (("003-speculative-decoding",), "in speculative decoding, which model checks the proposed tokens?",
     "In speculative decoding, the proposed tokens check the proposed tokens [1]."),
    (("000-nvidia-h200",), "посчитай аренду одной H200 на неделю", "Модели: крупные языковые моделя [1]."),
])
def test_the_sentences_shown_as_verified_before_are_rejected(ids: tuple[str, ...], question: str,
                                                             sentence: str) -> None:
    check = verifier_of(context(*ids), question, glossary=GLOSSARY).check(sentence)
    assert check.rejected is not None, check


def test_their_faithful_counterparts_pass() -> None:
    batch = verifier_of(context("003-batch-size"), "как выбрать размер батча?", "ru", glossary=GLOSSARY)
    assert batch.check("Больший batch может повысить эффективность вычислений, но требует больше памяти [1].").ok
    speculative = verifier_of(context("003-speculative-decoding"), "which model checks the proposed tokens?", "en",
                              glossary=GLOSSARY)
    assert speculative.check("A small fast model first proposes several tokens and a large model checks them [1].").ok


# written by the default model in `anchorgpu bench answers` (held-out set, generate mode) and shown as verified:
# the definition of Tokens per Second said of the Token (mutant class name_part_swap). The context held no
# Token entry, and "токен" alone names no concept inside a sentence; as what a sentence defines it does.
@pytest.mark.parametrize("knows_glossary", [True, False])
@pytest.mark.parametrize(("sentence", "reason"), [
    ("Токен — это основная метрика скорости инференса [1].", "swapped"),
    ("Token is the main metric of inference speed [1].", "swapped"),
    ("Tokens per Second — это основная метрика скорости инференса [1].", None),
    ("Tokens per Second is the main metric of inference speed [1].", None),
])
def test_a_definition_said_of_a_concept_named_by_a_part_of_the_cited_name_is_rejected(
        knows_glossary: bool, sentence: str, reason: str | None) -> None:
    question = "какую метрику берут, чтобы сравнить, какой движок инференса быстрее выдаёт текст?"
    entries = context("000-tokens-per-second", "000-perplexity", "000-throughput", "000-tpot")
    lang = "en" if sentence.startswith("Token") and " is " in sentence else "ru"
    verifier = verifier_of(entries, question, lang, glossary=GLOSSARY if knows_glossary else None)
    assert verifier.check(sentence).rejected == reason


def test_a_name_that_holds_the_cited_one_is_another_concept() -> None:
    # Batch Size holds Batching's name; a model number and a spelled-out acronym are the entry's own names
    batching = verifier_of(context("000-batching"), "что такое батчинг?", "ru", glossary=GLOSSARY)
    definition = ENTRIES["000-batching"].definition.split(".")[0]
    assert not batching.check(f"Batch Size — {definition[0].lower()}{definition[1:]} [1].").ok
    h100 = verifier_of(context("000-nvidia-h100"), "что такое H100?", "ru", glossary=GLOSSARY)
    assert h100.check("H100 — Datacenter-GPU NVIDIA на архитектуре Hopper с поддержкой FP8 и NVLink 4.0 [1].").ok
    ddp = verifier_of(context("002-ddp"), "что такое DDP?", "ru")
    first = ENTRIES["002-ddp"].definition.split(",")[0]
    assert ddp.check(f"DistributedDataParallel — {first[0].lower()}{first[1:]} [1].").rejected != "swapped"


def test_a_russian_sentence_does_not_answer_an_english_question() -> None:
    # written by the default model to "is gguf the same as the transformers format?" (the probe)
    english = verifier_of(context("003-gguf"), "is gguf the same as the transformers format?", "en",
                          glossary=GLOSSARY)
    check = english.check("GGUF — это формат хранения моделей, широко используемый современными инструментами [1].")
    assert check.rejected == "language"
    russian = verifier_of(context("003-gguf"), "gguf это то же что transformers?", "ru", glossary=GLOSSARY)
    assert russian.check("GGUF — это формат хранения моделей [1].").rejected != "language"
