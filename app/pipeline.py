"""The one reply pipeline: a message, its conversation and the user's language in; a typed reply out.

Every front calls :meth:`ReplyPipeline.reply` and only renders what comes back (:mod:`app.reply`). The
order of what decides, once for every front:

1. **Bad input** (empty, too long, emoji only, an alphabet the bot does not read) gets one clear line.
2. **Slots first** (:mod:`app.slots`): the GPUs, counts, duration, pricing and model the message names, read
   by the domain's own parsers. What was found decides most messages on its own: a GPU and a duration with
   a price or rental sense are a quote; a model and a GPU are a fit question in any words; two GPUs and a
   comparison are the catalog side by side.
3. **Hard policies** stay rules (:mod:`app.intents`): a price comes from the price list and a company rule
   is quoted from the glossary, never from the model.
4. **What the words ask** (:mod:`app.router`, nearest neighbours in a labelled bank on the multilingual-e5
   embedder): fit / quote / price / compare / spec / rule / lifecycle / small talk / glossary / off-topic,
   for messages the slots do not decide. A request whose route is clear but a required slot is missing is
   asked for (:class:`app.reply.ClarifyReply`); the next message that supplies the slot completes it.
5. Anything else is a glossary question, answered (streamed) by the answerer with its verification.

History is read once per message, here, and handed to the answerer.
"""

from __future__ import annotations

import logging
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Literal

from app.concepts import ConceptNames
from app.followup import (
    Refinement,
    opens_follow_up,
    quote_of_fit,
    quote_of_price,
    reads_as_follow_up,
    refine_fit,
    refine_quote,
)
from app.intents import AT_LEAST, GPUS_PER_SERVER, MEMORY_SIZE, Intent, IntentClassifier, spec_fields_asked
from app.lifecycle import (
    DATA,
    REFUND,
    STOP_RULE,
    BillingTopic,
    LifecycleTopic,
    answer_lifecycle,
    billing_topic,
    lifecycle_topic,
    stop_depends_on_billing,
    stops_something_else,
)
from app.reply import (
    CatalogReply,
    ClarifyOption,
    ClarifyReply,
    CompareReply,
    FitReply,
    GlossaryReply,
    LifecycleReply,
    Missing,
    QuoteReply,
    RefusalReply,
    Reply,
    Routing,
    SmallTalkReply,
)
from app.router import RouteScores, SemanticRouter
from app.slots import GpuSlot, Slots, normalise, read_slots
from app.smalltalk import FAREWELL
from app.translit import latin_words, russian_in_latin, to_cyrillic
from app.words import (
    CONCEPT_ASKED,
    HAVE_YOU,
    LISTING,
    NAMING,
    OUR_PRICES,
    QUOTED,
    TECHNIQUE,
    Signals,
    asked_clauses,
    budget_asked,
)
from gpu.compare import aspect_asked, compare_gpus, fastest_rented
from gpu.data import GpuData
from gpu.fit.architectures import ModelSpec
from gpu.fit.largest import family_named, language_models, largest_fitting
from gpu.fit.quant import WEIGHT_FORMATS
from gpu.fit.request import CLOSED_MODEL, FitInputError
from gpu.fit.service import FitService
from gpu.quote.duration import format_amount
from gpu.quote.engine import Quote
from gpu.quote.request import QuoteInputError, QuoteRequest
from gpu.quote.service import QuoteService
from infra.datafile import DataFile
from infra.i18n import Lang, Phrase
from rag.answering.prompt import Turn
from rag.context import is_definition_question
from rag.glossary import Glossary
from rag.language import detect_lang, is_why_question
from rag.text import is_russian_word

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 2000
# an action on a rental, or a question about one, that is not a price question
_LETTERS = re.compile(r"[A-Za-zА-Яа-яЁё]")
_ANY_LETTER_OR_DIGIT = re.compile(r"\w", re.UNICODE)
SMALL_TALK = ("greeting", "thanks", "help", "complaint")
# semantic confidence: a route is taken from the words alone when it leads by this much (e5 puts any two
# sentences above ~0.75, so leads are small); chosen by a grid on the dev part of tests/eval/routing.yaml
CLEAR_MARGIN = 0.009
SMALL_TALK_MIN_SCORE = 0.86
OFF_TOPIC_MIN_SCORE = 0.82
COMMON_DURATIONS: dict[Lang, tuple[str, ...]] = {"ru": ("1 день", "1 неделя", "2 недели", "1 месяц"),
                                                 "en": ("1 day", "1 week", "2 weeks", "1 month")}
# a message that opens with a greeting starts a conversation anew: it completes nothing asked before
GREETING = re.compile(r"(?i)^\W*(привет\w*|здравствуй\w*|добр\w+\s+(день|вечер|утро|ночи)|доброе\s+утро|хай|hi|hello"
                      r"|hey|good\s+(morning|afternoon|evening))\b")
# the courtesies around a request («здравствуйте, подскажите пожалуйста цены»): they make a message read as small
# talk to the router (it scored that one as a thanks), so it scores what is asked without them
_OPENING_GREETING = re.compile(GREETING.pattern + r"[\s,.!:;—-]+(?=\S+\s+\S+)")
_COURTESY = re.compile(r"(?i)\b(пожалуйста|пожалуйсто|плиз|please|pls|plz)\b[,!]?|^\W*(подскажите|скажите|подскажи"
                       r"|скажи)\b[,!]?\s+(?=\S+\s+\S+)")


def without_courtesies(text: str) -> str:
    """The message less an opening greeting and the words of politeness, when a request remains."""
    rest = _OPENING_GREETING.sub("", text, count=1)
    rest = _COURTESY.sub(" ", rest)
    rest = " ".join(rest.split())
    return rest or text


# who or what the bot is: "hey there, is this the gpu rental bot?", «ты бот?», "who are you"
ABOUT_THE_BOT = re.compile(r"(?i)(\bis\s+this\s+(the\s+|an?\s+)?([\w-]+\s+){0,3}(bot|support|assistant)\b"
                           r"|\bare\s+(you|u)\s+(a\s+|an\s+)?(bot|human|real\s+person|ai|robot)\b|\bwho\s+are\s+(you|u)\b"
                           r"|\bэто\s+([\w-]+\s+){0,3}(бот|поддержк\w*|ассистент)\b|\b(ты|вы)\s+(\w+\s+)?(бот|робот)\b"
                           r"|\bкто\s+(ты|вы)\b)")
MAX_FOLLOW_UP_CHAIN = 3  # «а на месяц?» then «а если 4?» then «а спот?»: each changes the one before
COMMON_MODELS = ("llama-3.1-8b", "qwen2.5-32b", "llama-3.1-70b", "deepseek-r1")
MAX_FAMILY_OPTIONS = 5  # the sizes of a family offered when it is named with none
_VARIANT = re.compile(r"-(coder|vl|distill)\b")

Route = Literal["fit", "quote", "clarify", "price", "compare", "spec", "rule", "lifecycle", "smalltalk",
                "glossary", "refusal"]


# a name in Latin letters (not the bot's own words: "help", "start", "bot")
NAMED_THING = re.compile(
    r"(?i)\b(?!(?:help|start|menu|bot|hi|hello|hey|ok|thanks?|thx|pls|please)\b)[a-z][a-z0-9_.+-]{2,}")
# one GPU cut into parts for several users (MIG, time slicing): how, not how much
SPLIT_GPU = re.compile(r"(?i)\b(нарез\w*|нареж\w*|порез\w*|подел\w*|раздел\w*|распил\w*|split\w*|partition\w*|slic\w+"
                       r"|carv\w+|shar(e|ed|ing)\b)")
# the catch of a cheaper way asked: a concept's trade-off, not a price
CATCH = re.compile(r"(?i)(в\s+ч[её]м|где)\s+(тут\s+)?подвох|\bwhat'?s\s+the\s+catch\b|\bany\s+catch\b"
                   r"|\bthe\s+downside\b|\bминус(ы)?\s+(в\s+ч[её]м|какие)|\bкакие\s+минусы")
# a complaint is about us («ответ неверный», "you're useless"); a long question about someone else's model or program
# («распознавалка галлюцинирует… как выкинуть тишину?», "my model answers differently every time, which knob…") asks
# something, and names neither us nor our answer
ASKS_SOMETHING = re.compile(r"(?i)\?|\b(как|каки\w+|какой|что|зачем|почему|чем|which|what|how|why|where|где)\b")
ABOUT_US = re.compile(r"(?i)\b(you|your|yours|u|ur|ты|тебя|тебе|тво[йиеёя]\w*|вы|вас|вам|ваш\w*|бот\w*|bot)\b")
# what one GPU is for or what kind of card it is ("what's the L40S actually built for?", «MI300X — что это вообще за
# карта и с кем её сравнивают?»): its glossary entry says; the spec card lists figures only
PURPOSE = re.compile(r"(?i)\b(built|designed|made|meant|intended|good)\s+for\b|\bwhat'?s\s+(it|that|the\s+\S+)\s+for\b"
                     r"|\bwhat\s+kind\s+of\s+(card|gpu)\b|для\s+чего|под\s+как\w+\s+задач|для\s+как\w+\s+задач"
                     r"|что\s+(это\s+)?(вообще\s+)?за\s+(карт|видеокарт|gpu|железк)\w*|с\s+к[еа]м\s+(е[её]|его)\s+сравнива")
# a lighter or faster version of a named model asked for («виспер жрёт память, есть версия пошустрее?», "is there a
# lighter variant of sdxl?"): a concept (faster-whisper, distillation), not a fit, whatever memory it mentions
ALTERNATIVE = re.compile(r"(?i)(верси|вариант|аналог|альтернатив|реализаци|сборк)\w*\s+(\w+\s+)?(по)?(шустрее|быстрее"
                         r"|легче|лучше|меньше|полегче|поменьше)|(faster|lighter|smaller|quicker|leaner)\s+([\w-]+\s+)?"
                         r"(version|variant|alternative|implementation|fork|build)s?\b")
# a setting written as code ("what max_norm should i use…", «какой weight_decay ставить для 7b?»): a question about
# that setting, not a fit (the answerer refuses it by name when the glossary lacks it)
CODE_NAME = re.compile(r"(?i)\b[a-z]+_[a-z_]+\b|\b[a-z]+\.[a-z_]+\(")
# two options set against each other, not the hardware to run on («на чём лучше гонять gemma?» asks the fit)
TOOLS_OR = re.compile(r"(?i)^(?!.*\bна\s+ч[её]м\b).*(\bor\b|\bили\b|\bvs\.?|\bversus\b|\bпротив\b)")
# how long a training or a run takes («сколько времени учить 70b с нуля?», "how long does it take to train a 70b
# model?"): a time the fit does not compute (the glossary says what it says about it, or nothing)
TIME_ASKED = re.compile(r"(?i)\bhow\s+long\s+(does|would|will|did)\s+(\S+\s+){1,5}take\b"
                        r"|\bhow\s+long\s+to\s+(train|fine|finetune|pretrain)|сколько\s+(времени|дней|часов|по\s+времени)\s+(\w+\s+)?(займ|уйд|обуча|учит"
                        r"|трениров|дообуч|файнтюн)|как\s+долго\s+(\w+\s+)?(обуча|учит|трениров|дообуч)"
                        r"|\bсколько\s+(\w+\s+)?(займ[её]т|уйд[её]т)\b")
_FORMATS = r"(bf16|fp16|fp32|tf32|fp8|fp4|int8|int4|nf4|awq|gptq|gguf)"
FORMAT_CHOICE = re.compile(r"(?i)\b" + _FORMATS + r"\s*(или|or|vs\.?|versus|либо|/)\s*" + _FORMATS + r"\b")
COMPATIBLE = re.compile(r"(?i)\bcompatib\w*|\bсовместим\w*|\b(support|supports|supported|поддерживает|поддержива\w*)\s+"
                        r"(\w+\s+)?(cuda|rocm|nccl|tensorrt|cudnn|triton|flash[\s-]?attention|vllm|pytorch)\b|\bwork\w*\s+with\s+"
                        r"(cuda|rocm|pytorch|vllm|tensorrt)\b|\b(cuda|rocm)\s+(on|на)\b"
                        r"|\b(cuda|rocm|vllm|pytorch|tensorrt|triton|sglang|tgi|ollama|deepspeed)\s+(support|supports|работает"
                        r"|поддерживает)\b")
CONTEXT_LENGTH = re.compile(r"(?i)\b(max(imum)?\s+)?context\s+(length|window|size|limit)|\bmax(imum)?\s+context\b"
                            r"|\bhow\s+(long|much)\s+(of\s+(a|the)\s+)?context|\bcontext\s+(does|can)\b"
                            r"|\b(длин\w*|размер\w*|окн\w*)\s+контекст\w*|\bконтекстн\w+\s+окн\w*|\bмакс\w*\s+контекст\w*"
                            r"|\bкакой\s+(\w+\s+)?контекст\b|\bсколько\s+(токенов\s+)?контекст\w*")
NEED_GPUS = re.compile(r"(?i)\b(need|want|looking\s+for|нужн\w*|нуж(ен|на|ны)|хочу|ищу|надо)\s+(\w+\s+)?(gpus|cards"
                       r"|servers|machines|карт\w*|видеокарт\w*|гпу|сервер\w*|машин\w*)")
SHORT_REQUEST_WORDS = 8  # «ок а если на месяц с коммитом?»: a way of paying and a term, said as a request
RENT_ASKED = re.compile(r"(?i)\brent|аренд|\bbook\b|\bснять\b|\bвзять\b")
# which GPU to take asked of a model («какая карта лучше для llama 70b по цене», "best gpu for qwen 32b price-wise")
WHICH_GPU = re.compile(r"(?i)\b(какая|какую|какой|какие|which|what)\s+(\w+\s+)?(карт|видеокарт|gpu|гпу|card|setup"
                       r"|конфиг|сервер|server)\w*|\bbest\s+(\w+\s+)?(gpu|card|setup|option)|\bлучш\w*\s+(\w+\s+)?"
                       r"(карт|видеокарт|gpu|гпу|вариант)\w*")
# the hardware a question names in general words ("why does llama 70b need 2 gpus?"): a fit question
GPU_WORDS = re.compile(r"(?i)\bgpus?\b|\bгпу\b|\bcards?\b|карт[аыуе]?\b|видеокарт|видюх|\bvram\b|памят|\bmemory\b"
                       r"|\bgb\b|\bгб\b|\bгиг\w*")
# a GPU's figures asked as a whole: "a100 specs", «характеристики h200», «тех параметры»
SPEC_ASKED = re.compile(r"(?i)\bspec(s|ifications?|\s+sheet)?\b|\bdatasheet\b|характеристик\w*|\bтту?х\b|параметр\w*")
# what a model needs: its memory, the GPU for it
SIZING = re.compile(r"(?i)\bvram\b|\bmemory\b|памят|видеопамят|\bwhich\s+gpu|\bwhat\s+gpu|"
                    r"какая\s+(карта|видеокарта|gpu)|\bhow\s+many\s+gpus?|сколько\s+(карт|gpu|гпу|видеокарт)|"
                    r"\bgb\b|\bгб\b")
# a machine the customer already has: what they ask is how to use it, not how to rent one
ALREADY_RENTED = re.compile(r"(?i)арендованн\w*|\brented\b|\bмо(й|ем|ём)\s+(сервер|инстанс|машин)\w*"
                            r"|\bmy\s+(server|instance|machine|box|vm|node)\b")
MAX_QUOTE_OPTIONS = 5  # GPUs priced for a requirement that names none (the cheapest ones)


@dataclass(frozen=True)
class Decision:
    route: Route
    missing: Missing | None = None
    smalltalk: str | None = None
    refusal: str | None = None
    billing: BillingTopic | None = None  # a rule question about how time is billed (app.lifecycle)
    lifecycle: LifecycleTopic | None = None  # the topic a lifecycle answer takes when the wording alone does not say
    largest: bool = False  # a fit asked the other way round: the largest models the GPU runs
    fastest: bool = False  # the fastest GPUs we rent, with none named: the leaders compared
    about: str | None = None  # what a refusal names ("vllm 0.4.2")




# the keyboard's letter rows, both layouts: five keys in a row along one is a hand run across it, not a word
_KEYBOARD_ROWS = ("йцукенгшщзхъ", "фывапролджэ", "ячсмитьбю", "qwertyuiop", "asdfghjkl", "zxcvbnm")
_RUNS = frozenset(row[i:i + 5] for row in (*_KEYBOARD_ROWS, *(r[::-1] for r in _KEYBOARD_ROWS))
                  for i in range(len(row) - 4))
_WORD_TOKEN = re.compile(r"[^\W\d_]+")


def is_keyboard_mash(text: str) -> bool:
    """«ывапролджэ», "asdfgh jkl": every word of three letters or more has a run of five keys in a row."""
    words = [w.lower() for w in _WORD_TOKEN.findall(text) if len(w) >= 3]
    return bool(words) and all(any(w[i:i + 5] in _RUNS for i in range(len(w) - 4)) for w in words)


_CYRILLIC_WORD = re.compile(r"[а-яё]{3,}", re.IGNORECASE)
_LATIN_WORD = re.compile(r"[a-z]{3,}", re.IGNORECASE)
_VOWEL = re.compile(r"[aeiouy]")
# what customers type that the dictionary lacks (the glossary's own words are checked besides)
KNOWN_SLANG = frozenset({"видюха", "видюхи", "видюху", "видюхой", "сервак", "сервака", "серваки", "гпу", "гпух",
                         "гпуха", "квен", "лама", "ламу", "дипсик", "пасиб", "пасибо", "спасибки", "норм", "плиз",
                         "пжлст", "пжл", "кнч", "спс", "инференс", "файнтюн", "файнтюнить", "квант", "кванты",
                         "здарова", "дарова", "прив", "приветики", "хеллоу", "сяп", "благодарочка", "пасиба",
                         "сенкс", "плз", "неа"})


class ReplyPipeline:
    def __init__(self, data: GpuData, fit: FitService, quotes: QuoteService, intents: IntentClassifier,
                 glossary: DataFile[Glossary] | None = None) -> None:
        self.data = data
        self.glossary = glossary  # its Latin words stay Latin in a Russian message typed in Latin letters
        self._latin: tuple[object, frozenset[str]] | None = None
        self._concepts: tuple[object, ConceptNames] | None = None
        self.fit = fit
        self.quotes = quotes
        self.intents = intents
        self.router: SemanticRouter | None = None
        self.encode: Callable[[str], object] | None = None  # the retriever's cached query embedding

    def read_as_written(self, text: str) -> str:
        """The message with its spacing evened out, and Russian typed in Latin letters («chto takoe
        pereobuchenie?») spelled in Cyrillic: it is Russian, routed by its Russian words and answered in Russian."""
        text = " ".join(text.split())
        names = self._latin_words()
        return to_cyrillic(text, names) if russian_in_latin(text, names) else text

    def _latin_words(self) -> frozenset[str]:
        """The names to keep in Latin letters: the catalogs' and the Russian glossary's own Latin words."""
        entries = self.glossary.get() if self.glossary is not None else None
        if self._latin is None or self._latin[0] is not entries:
            texts = self._catalog_names()
            texts += [text for entry in entries or () for text in (*entry.names, entry.definition)]
            self._latin = (entries, latin_words(texts))
        return self._latin[1]

    def _catalog_names(self) -> list[str]:
        """Every spelling of the catalogs' GPUs and models."""
        names = [name for spec in self.data.gpus.all() for name in (spec.id, spec.name, *spec.aliases)]
        return names + [name for model in self.data.models.all() for name in (model.id, model.name, *model.aliases)]

    def _concept_named(self, text: str) -> bool:
        """The message names a glossary concept by its Latin name (a GPU's or a model's aside)."""
        entries = self.glossary.get() if self.glossary is not None else None
        if entries is None:
            return False
        if self._concepts is None or self._concepts[0] is not entries:
            self._concepts = (entries, ConceptNames(list(entries), self._catalog_names()))
        return self._concepts[1].named(text) is not None

    def _concept_asked(self, asked: Sequence[str]) -> bool:
        """The last question asks a name, a cause, a cost or a method, and no question names a GPU or a model ("we
        have 2 a100. can we run mixtral? what's the catch?" asks the fit first)."""
        last = asked[0]
        if not (NAMING.search(last) or TECHNIQUE.search(last) or CONCEPT_ASKED.search(last) or CATCH.search(last)
                or ALTERNATIVE.search(last)):
            return False
        for clause in asked:
            named = read_slots(clause, self.fit)
            if named.gpus or named.model is not None:
                return False
        return True

    def _unknown_version(self, text: str) -> bool:
        """A model named in a version the catalog lacks ("stable diffusion 3.5", "flux 2"): the fit says so
        rather than asking which model."""
        try:
            self.fit.parser.parse(normalise(text))
        except FitInputError as exc:
            return exc.phrase.key == "fit_err_unknown_version"
        return False

    def _gpu_in_glossary(self, gpu_id: str) -> bool:
        """The glossary has an entry on this GPU (named by one of the catalog's names for it)."""
        entries = self.glossary.get() if self.glossary is not None else None
        spec = next((spec for spec in self.data.gpus.all() if spec.id == gpu_id), None)
        if not entries or spec is None:
            return False
        names = {name.lower() for name in (spec.id, spec.name, *spec.aliases)}
        return any(name.lower() in names for entry in entries for name in entry.names)

    def attach_router(self, router: SemanticRouter, encode: Callable[[str], object]) -> None:
        self.router, self.encode = router, encode

    # ---- semantic scores ------------------------------------------------------------------------------
    def semantic(self, text: str) -> RouteScores | None:
        if self.router is None or self.encode is None:
            return None
        try:
            vector = self.encode(without_courtesies(text))
        except Exception:  # an embedder failure must not cost the reply: slots and rules still route
            log.exception("routing embedding failed")
            return None
        if vector is None:
            return None
        return self.router.score(vector)  # type: ignore[arg-type]

    # ---- the one entry point ----------------------------------------------------------------------------
    async def reply(self, text: str, *, history: Sequence[Turn] = (), lang: Lang | None = None) -> Reply:
        """The reply to one message. ``history``: the conversation's turns, oldest first (read once by the
        caller's conversation store); ``lang``: the user's chosen language, else the message's."""
        text = self.read_as_written(text)
        reply_lang: Lang = lang or detect_lang(text)
        bad = self.bad_input(text)
        if bad is not None:
            return RefusalReply(text[:200], reply_lang, Routing("refusal", Slots()), bad)
        previous = [turn.text for turn in reversed(history) if turn.role == "user"]
        merged = self._completes(text, previous)
        if merged is not None:
            reply = self.decide_and_build(merged, reply_lang, previous[1:])
            return replace(reply, routing=replace(reply.routing, merged_with=previous[0]))
        refined = self._refines(text, previous)
        if refined is not None:
            slots = read_slots(refined.text, self.fit)
            routing = Routing(refined.route, slots, None, merged_with=previous[0])
            return self._build(refined.text, reply_lang, Decision(refined.route), routing, previous[1:])
        return self.decide_and_build(text, reply_lang, previous)

    def route(self, text: str, previous: Sequence[str] = ()) -> tuple[Decision, Slots, RouteScores | None]:
        """The decision alone (the routing benchmark and ``--json`` use it)."""
        text = self.read_as_written(text)
        if self.bad_input(text) is not None:
            return Decision("refusal", refusal="bad_input"), Slots(), None
        slots = read_slots(text, self.fit)
        semantic = self.semantic(text)
        return self._decide(text, slots, semantic, previous), slots, semantic

    def decide_and_build(self, text: str, lang: Lang, previous: Sequence[str]) -> Reply:
        decision, slots, semantic = self.route(text, previous)
        return self._build(text, lang, decision, Routing(decision.route, slots, semantic), previous)

    # ---- bad input ------------------------------------------------------------------------------------
    @staticmethod
    def bad_input(text: str) -> Phrase | None:
        """What is wrong with a message no parser should read: empty, too long, no words, another alphabet."""
        if not text:
            return Phrase.of("ask_usage")
        if len(text) > MAX_MESSAGE_CHARS:
            return Phrase.of("question_too_long", length=len(text), limit=MAX_MESSAGE_CHARS)
        if not _ANY_LETTER_OR_DIGIT.search(text):
            return Phrase.of("pipeline_no_words")
        letters = [ch for ch in text if unicodedata.category(ch).startswith("L")]
        if letters and not _LETTERS.search(text):
            return Phrase.of("pipeline_alphabet")
        if is_keyboard_mash(text):
            return Phrase.of("pipeline_no_words")
        return None

    # ---- a follow-up that fills a slot -----------------------------------------------------------------
    def _completes(self, text: str, previous: Sequence[str]) -> str | None:
        """``previous[0] + text`` when the previous message was a request missing a slot that this one gives
        (a typed «на неделю» or a pressed button after «How long?»)."""
        if not previous or len(text.split()) > 8 or GREETING.search(text):
            return None  # «добрый вечер, подскажите по a100» starts anew, whatever was asked before
        now = read_slots(text, self.fit)
        supplies = {"duration": now.duration is not None or now.years is not None, "gpu": bool(now.gpus),
                    "model": now.model is not None}
        if not any(supplies.values()):
            return None  # «спасибо», «а FSDP?»: nothing to complete with, so the earlier turn is not re-routed
        if self.route(text, previous)[0].route in ("quote", "fit"):
            return None  # «2 h100 на неделю» after «4090 на сколько?»: a whole request of its own
        earlier = previous[0]
        decision, _, _ = self.route(earlier, previous[1:])
        if decision.route != "clarify" or decision.missing is None:
            return None
        return f"{earlier} {text}" if supplies[decision.missing] else None

    # ---- a follow-up that changes the request before it --------------------------------------------------
    def _refines(self, text: str, previous: Sequence[str], depth: int = 0) -> Refinement | None:
        """The request before, changed by this short follow-up («а на месяц?», "and for 4 of them?",
        «а в fp8?»); None when this message is not one or the turn before was not a quote or a fit."""
        if not previous or depth > MAX_FOLLOW_UP_CHAIN or not reads_as_follow_up(text) or GREETING.search(text):
            return None
        own, now, semantic = self.route(text, previous)
        if own.route in ("quote", "fit", "compare", "rule", "lifecycle"):
            return None  # a request of its own
        # "a100 specs", "h200 bandwidth?" after a quote: that GPU's figures, not the quote on it («а в fp8?» and
        # «а с 40 гб?» name a format or a memory the earlier request changes, so those two fields do not count)
        figures = set(spec_fields_asked(text)) - {"compute", "memory"}
        if own.route == "spec" and now.gpus and (figures or SPEC_ASKED.search(text)):
            return None
        words = Signals(normalise(text), semantic)
        supplies = now.duration is not None or now.count is not None or bool(now.gpus)
        if not supplies and (is_definition_question(text) or words.explain or words.how):
            return None  # «а что такое спот?» asks something of its own ("how much for a week?" does not)
        if own.route == "price" and not opens_follow_up(text):
            return None  # «сколько стоит 4090?» after a quote: that GPU's prices
        earlier_text, earlier_route = self._effective(previous, depth + 1)
        earlier = read_slots(earlier_text, self.fit)
        if earlier_route == "quote":
            refined = refine_quote(earlier, normalise(text), now)
            if refined is not None or len(previous) < 2:
                return refined
            # "what if I use fp8?" after a fit and then its price: a change to the fit, not to the quote
            before_text, before_route = self._effective(previous[1:], depth + 1)
            if before_route != "fit":
                return None
            return refine_fit(read_slots(before_text, self.fit), normalise(text), now, self.fit.parser)
        if earlier_route == "fit" and own.route == "price" and now.gpus and now.duration is None:
            return None  # «а сколько стоит час l40s?» after a fit: that GPU's price, not the fit on it
        if earlier_route == "fit" and now.duration is not None and not now.gpus:
            try:  # «а сколько это будет стоить на неделю?»: the price of the configuration the fit found
                result = self.fit.fit(normalise(earlier_text),
                                      gpu_count=earlier.count if len(earlier.gpus) == 1 else None)
            except FitInputError:
                return None
            return quote_of_fit(result, now, normalise(text))
        if earlier_route == "fit":
            return refine_fit(earlier, normalise(text), now, self.fit.parser)
        if earlier_route == "price" and now.model is None:
            total = self.intents.memory_total(earlier_text)
            if now.duration is not None and not now.gpus and total is not None:
                # "for a week" after "I need 640GB of VRAM, what are my options?": each set priced for the week
                return Refinement(f"{total}GB {normalise(text)}", "quote")
            if now.duration is not None:  # «а если 4 штуки на неделю?» after «сколько стоит 4090?»: its quote
                return quote_of_price(earlier, normalise(text), now)
            if now.gpus:  # «а на 4090?» after «сколько стоит час l40s»: that GPU's prices
                return Refinement(" ".join(gpu.id for gpu in now.gpus) + " price", "price")
        return None

    def _effective(self, previous: Sequence[str], depth: int) -> tuple[str, Route]:
        """What the turn before asked, with what it completed or changed itself, and its route."""
        merged = self._completes(previous[0], previous[1:])
        if merged is not None:
            return merged, self.route(merged, previous[1:])[0].route
        refined = self._refines(previous[0], previous[1:], depth)
        if refined is not None:
            return refined.text, refined.route
        route = self.route(previous[0], previous[1:])[0].route
        if route == "smalltalk" and len(previous) > 1 and depth <= MAX_FOLLOW_UP_CHAIN:
            return self._effective(previous[1:], depth + 1)  # "thanks" between a quote and "and spot?"
        return previous[0], route

    # ---- the policy -------------------------------------------------------------------------------------
    def _decide(self, text: str, slots: Slots, semantic: RouteScores | None, previous: Sequence[str]) -> Decision:
        words = Signals(normalise(text), semantic)  # translit of the domain's words read as Cyrillic
        sem = semantic.route if semantic is not None else None
        has_gpu, has_model, has_duration = bool(slots.gpus), slots.model is not None, slots.duration is not None
        distinct = len(set(slots.gpu_ids))
        topic = lifecycle_topic(text)
        money = words.price or words.calculate
        if words.injection:
            return Decision("refusal", refusal="off_topic")  # "ignore previous instructions…": never obeyed
        if FAREWELL.match(text):
            return Decision("smalltalk", smalltalk="farewell")  # «пока»: not a greeting to introduce the bot to
        # «бесполезный ты бот» says the bot did not help: a complaint, not a question of what it is
        complaint = sem == "complaint" and words.lead(sem) >= CLEAR_MARGIN
        if ABOUT_THE_BOT.search(text) and not words.insult and not complaint and not has_gpu and not has_model \
                and not has_duration:
            return Decision("smalltalk", smalltalk="help")  # what this bot is and does
        # a fault or build of one program's version («vllm 0.4.2 падает…»), a release date or a future price: in
        # no glossary and no catalog (an OOM is the fit's question, a GPU we rent is the price list's)
        if words.version_trouble and not has_model and not has_duration:
            return Decision("refusal", refusal="versions", about=words.version_trouble)
        if words.release and not has_gpu and not has_model and not has_duration:
            return Decision("refusal", refusal="releases")
        if slots.fractional_count and has_gpu:
            return Decision("lifecycle", lifecycle="whole_gpus")  # "1.5 h100 for 3 hours": rentals are whole GPUs
        if slots.loose_count == 0 and not has_gpu and (has_duration or money or words.rental):
            return Decision("refusal", refusal="zero_count")  # "0 gpus for a week": the count's limits, as "0 h100"
        if slots.years is not None and not has_duration and (has_gpu or money or words.rental):
            return Decision("quote")  # "for 500 years": the quote engine's limit says why not
        # a closed model's memory or a GPU to run it («сколько видеопамяти нужно для gpt-4o»): the fit says why
        # there is nothing to compute, and which open models of its class can be checked
        if CLOSED_MODEL.search(text) and not has_model and (words.strong_fit or has_gpu or SIZING.search(text)):
            return Decision("fit")
        # a GPU and a duration asked as a price or a rental: the computed quote (a model named too: the price
        # of running it is still the price of the GPUs)
        # two configurations and a time, asked which costs less («что дешевле на месяц: 8 A100 или 4 H100?»):
        # each priced the same way, side by side
        if distinct >= 2 and has_duration and not has_model and (money or words.cheaper):
            return Decision("quote")
        # a budget and a term, no GPU ("I have $2000 for a week, what can I rent?"): the most of each GPU it pays for
        if budget_asked(text) is not None and has_duration and not has_gpu and not has_model:
            return Decision("quote")
        # no GPU named but what it must have and for how long ("4 GPUs with at least 80GB each for 2 weeks, what
        # are my options?", "cheapest option for 8 gpus for a month"): every GPU that qualifies, priced
        asks_options = MEMORY_SIZE.search(text) is not None or words.cheapest or words.cheaper
        if not has_gpu and has_duration and not has_model and asks_options \
                and (money or words.rental or slots.count is not None or sem in ("quote", "price")):
            return Decision("quote")
        rented = words.rental or slots.count is not None or sem in ("quote", "price", None)
        # «арендую h100 на месяц, если через неделю станет не нужно, вернёте деньги?»: the rental is the context of a
        # refund asked, which the billing rule answers (a quote of the month would not)
        refund_asked = REFUND.search(text) is not None and not words.calculate
        if has_gpu and has_duration and not words.single_hour_rate(slots) and not refund_asked and (
                money or (not has_model and (topic is None or topic == "rent") and rented)):
            return Decision("quote")
        off_topic = sem == "off_topic" and words.lead(sem) >= CLEAR_MARGIN
        # "what's the cheapest gpu with 48gb?": the price list cheapest first (a model named: the fit's
        # cheapest configurations; a duration: the quote, which lists the cheaper ways to pay)
        if words.cheapest and not has_model and not has_duration and not off_topic:
            return Decision("price")
        # "I need 640GB of VRAM, what are my options?": more memory than any card we rent, so a total; the sets of
        # GPUs that add up to it, per hour (a duration makes it the quote above)
        if self.intents.memory_total(text) is not None and not has_gpu and not has_model and not has_duration \
                and not off_topic:
            return Decision("price")
        # "which gpus have at least 80gb?": the rented GPUs of that memory or more (a bound names no one card)
        if AT_LEAST.search(text) and not has_model and not has_duration and not off_topic \
                and not self.intents.gpus_named(MEMORY_SIZE.sub(" ", text)):
            return Decision("price")
        # another provider's prices or a way to pay: neither is in the price list, the rules or the glossary
        # (a provider's name with nothing of compute, prices or renting is something else: "scrape amazon")
        about_compute = has_gpu or money or words.rental or words.cheaper or words.compare or words.price_list \
            or words.availability or words.discount or GPU_WORDS.search(text) is not None
        if words.other_provider and about_compute and not has_model and not has_duration:  # a GPU's price: ours
            return Decision("price") if has_gpu and words.price and not words.at_other_provider \
                else Decision("refusal", refusal="other_provider")
        if words.payment_method and not has_model and not (has_gpu and has_duration):
            return Decision("refusal", refusal="payment_method")
        # taxes: no price, rule or entry answers them; the tax in our prices is the account manager's, as VAT is
        if words.tax and not words.payment_method and not has_model and not has_duration:
            return Decision("refusal", refusal="payment_method" if OUR_PRICES.search(text) else "off_topic")
        # where the GPUs physically are: in no price list, rule or entry («ваши gpu в европе?», "which region?")
        if words.location and not has_model and not has_duration:
            return Decision("refusal", refusal="location")
        # something for free («есть пробный период?», "do you offer free credits for startups?"): no rule states one
        if words.trial and not has_model and not has_duration and not is_definition_question(text):
            return Decision("refusal", refusal="trial")
        # an uptime promised («какой у вас sla?», "what uptime do you guarantee?"): no rule or entry states one
        if words.sla and not has_model and not has_duration and not words.explain and not is_definition_question(text):
            return Decision("refusal", refusal="sla")
        # the currency: the price list has one (a GPU or a rental named: its price, in that currency)
        if words.currency and not has_gpu and not has_model and not has_duration:
            return Decision("refusal", refusal="currency")
        # "what's that called?", «как называется штука, которая раздаёт задачи по видеокартам?»: a concept's name; a
        # model or GPU beside it is its context ("what is this technique called where you train a 70b with less
        # memory", «учу 13b на двух 3090 и не влезает, как называется…»), unless what is named is asked to run there
        # («как называется самая большая модель, что влезет в 4090?»)
        if words.name_asked and not has_duration and not money:
            return Decision("glossary")
        # the question is the message's last sentence: a name, a cause, a cost or a method asked there, of no GPU or
        # model it names («учу 7b на 4090, вылетает по памяти. активации можно не хранить — как это называется?»,
        # "70b on two cards, memory keeps growing on long chats. what's eating it?"), is a concept's question; the
        # model, the GPU and the error said before it are its context
        if not money and not has_duration and self._concept_asked(asked_clauses(text)):
            return Decision("glossary")
        # «что такое lora для stable diffusion?»: a concept the glossary names, the model only its qualifier
        if has_model and not has_gpu and not has_duration and not money and is_definition_question(text) \
                and self._concept_named(text) and not SIZING.search(text) and not words.strong_fit:
            return Decision("glossary")
        # how time is billed, spot capacity taken back: the quote engine's rules (a model named: a fit question)
        billing = billing_topic(text)
        if billing is not None and not has_model and not off_topic and not (has_gpu and words.price):
            # "does stopping an hourly instance stop the billing?": the committed term's "no" is half the answer
            if stop_depends_on_billing(text) and any(answer.rule.id == STOP_RULE
                                                     for answer in self.intents.rules.match(text)):
                return Decision("lifecycle", lifecycle="stop")
            return Decision("rule", billing=billing)
        # how to stop, extend, start again: the product's rules, unless the question is about paying
        if topic is not None and not words.payment and not has_model and not off_topic \
                and (topic != "rent" or (words.how and not has_gpu)):
            return Decision("lifecycle")
        # "can you book me 2 h100 starting tomorrow?", «плиз арендуй мне 4 a100»: a rental asked for with no
        # length: for how long (then the quote and its Rent button)
        # «одна a100 на троих, можно её нарезать?», "can i split one h100 between students?": sharing a GPU, a concept
        if has_gpu and SPLIT_GPU.search(text) and not has_duration and not has_model and not money:
            return Decision("glossary")
        counted = slots.count is not None or any(gpu.count for gpu in slots.gpus)
        # «обучить на 1 трлн токенов, сколько это займёт на 8 h100»: how long the work takes, not a rental's length
        if has_gpu and not has_duration and not money and TIME_ASKED.search(text):
            return Decision("refusal", refusal="time_estimate")
        if has_gpu and counted and not has_duration and not has_model and words.rent_request \
                and not words.strong_fit and not words.rate and not off_topic:
            return Decision("clarify", missing="duration")
        rules = self.intents.rules.match(text) if not stops_something_else(text) else []
        if rules:
            # "can I pause an instance and not pay?": the glossary's rule is about a paid period; an hourly
            # placement stops billing when stopped, so without a term named both ways are the answer
            if any(answer.rule.id == STOP_RULE for answer in rules) and stop_depends_on_billing(text):
                return Decision("lifecycle", lifecycle="stop")
            return Decision("rule")
        # the router hears a rental question with no rental topic in its words: how to rent, unless the machine is
        # one the customer already has («на арендованном сервере как зайти по ключу?»: a question about using it),
        # or how to keep one's data
        # ("how do i keep my dataset between rentals?": storage, a concept; the end of a rental is a topic above)
        if sem == "lifecycle" and words.lead(sem) >= 2 * CLEAR_MARGIN and not has_gpu and not has_model \
                and not ALREADY_RENTED.search(text) and not DATA.search(text) and not stops_something_else(text):
            return Decision("lifecycle")
        # a model's own context length ("what is the context length of llama 3.1", «какой контекст у qwen 2.5 7b»): the
        # catalog's figure (with a GPU named, the fit says how much of it fits)
        if CONTEXT_LENGTH.search(text) and not has_gpu and not has_duration and not money \
                and not GPU_WORDS.search(text) and (has_model or self._family_sizes(text)):
            return Decision("spec", about="model_context")
        # "whats the fastest gpu you have?", «самая мощная карта у вас?»: the rented leaders, side by side
        if words.fastest and not has_gpu and not has_model and not has_duration and not money:
            return Decision("compare", fastest=True)
        # "what's the biggest model i can run on a 4090?", «какие модели потянет l40s?»: the fit the other way round
        if has_gpu and not has_model and not has_duration and not money and words.largest_model:
            return Decision("fit", largest=True)
        # a fact about a named model, not the hardware it needs («на каком объёме аудио обучали whisper?», "does
        # sdxl use a single text encoder?", "who's behind flux?"): the glossary's, not a fit to compute
        if has_model and words.model_fact and not has_gpu and not has_duration and not money \
                and not SIZING.search(text):
            return Decision("glossary")
        # a model as the context of a question about how or with what («47b, а по скорости как 13b. как так?»,
        # "copy the pose from a photo, what does that in stable diffusion?"): no hardware asked, no fit to compute
        if has_model and (words.explain or words.technique or words.naming) and not has_gpu and not has_duration \
                and not money and not words.strong_fit and not SIZING.search(text) and not GPU_WORDS.search(text):
            return Decision("glossary")
        # a technique asked with one GPU as its context («учу на своей 4090, ловлю OOM — есть трюк, где жертвуешь
        # скоростью… что за трюк?», «одна 3060, слышал есть вариант, где база в 4 битах»): the technique's question
        if has_gpu and words.technique and distinct < 2 and not has_model and not has_duration and not money:
            return Decision("glossary")
        # two formats to choose between, or a platform's support, with one GPU as the context («bf16 или fp16 для
        # обучения на a100», "is the mi300x compatible with cuda"): the concepts' question, not the GPU's figures
        if has_gpu and distinct < 2 and not has_model and not has_duration and not money \
                and (FORMAT_CHOICE.search(text) or COMPATIBLE.search(text)) and self._concept_named(text):
            return Decision("glossary")
        if has_gpu and distinct == 1 and PURPOSE.search(text) and not has_model and not has_duration and not money \
                and self._gpu_in_glossary(slots.gpu_ids[0]):
            return Decision("glossary")
        # and a choice between two tools with a model named in passing ("comfyui or automatic1111 for sd + flux
        # pipelines, which suits better?"): no GPU, no memory, no running asked
        if has_model and TIME_ASKED.search(text) and not has_duration and not money:
            return Decision("glossary")
        two_tools = words.compare and TOOLS_OR.search(text) is not None and not words.strong_fit
        if has_model and not has_gpu and not has_duration and not money and (
                ALTERNATIVE.search(text) or (not SIZING.search(text) and (CODE_NAME.search(text) or two_tools))):
            return Decision("glossary")
        # the router hears a glossary question and it asks how or why: a GPU or model named in passing is
        # context («учим на a100 в fp16, лезут nan — что даст bf16?»), not the question
        if sem == "glossary":
            lead = words.lead(sem)
            glossary_heard = lead >= CLEAR_MARGIN or (lead > 0 and words.explain)
        else:
            # no model named, so no fit to compute: a how/why question the router hears as glossary nearly
            # as well as its best route is the glossary's
            glossary_heard = semantic is not None and not has_model \
                and semantic.of("glossary") >= semantic.score - CLEAR_MARGIN
        if glossary_heard and words.explain and not money and not has_duration \
                and not (words.strong_fit and has_model):
            return Decision("glossary")
        if distinct >= 2 and not has_model and not has_duration and (words.compare or sem == "compare"):
            return Decision("compare")
        if has_model and has_gpu and not money:
            return Decision("fit")
        if has_gpu and not has_model and not money and not has_duration and self._unknown_version(text):
            return Decision("fit")  # "mistral large 2 on 4 a100": the fit says the catalog lacks that model
        if has_gpu and distinct == 1 and not has_model and not money and not has_duration and self._family_sizes(text):
            return Decision("clarify", missing="model")  # "gemma3 on a 4090?": which of the family's sizes
        if has_model and distinct >= 2 and not has_duration and words.compare:
            return Decision("fit")  # «gemma 12b: 4090 или l4 по деньгам?»: the fit on each, prices beside
        chat = sem in ("off_topic", *SMALL_TALK) and words.lead(sem, SMALL_TALK) >= CLEAR_MARGIN
        # "what are your prices" is the price list; "what is spot pricing?" asks what spot is
        price_list_asked = words.price and sem == "price" and words.lead(sem) >= CLEAR_MARGIN and slots.pricing is None
        if is_definition_question(text) and not has_gpu and not has_model and not slots.duration and not chat \
                and not price_list_asked:
            return Decision("glossary")  # «что такое спот-инстанс?»: a concept, whatever words it has
        priced = money or words.discount or words.price_list or words.price_cover or (
            sem in ("quote", "price") and words.lead(sem) >= CLEAR_MARGIN)
        # «сколько жрёт по питанию l40s»: a "how much" of a GPU's own figure is a spec question, not a price
        if priced and has_gpu and not words.price and not words.rental and spec_fields_asked(text):
            priced = False
        # "why do datacenter gpus cost 10x a gaming card?", «дешевле, но машину могут забрать — в чём подвох?»: a cause
        # or a catch asked, which no price list states
        if priced and (is_why_question(text) or CATCH.search(text)) and not has_gpu and not has_model \
                and not has_duration and slots.count is None:
            return Decision("glossary")
        if priced:
            quote_asked = words.calculate or (slots.count or 0) > 1 or (sem == "quote" and not words.price)
            if has_gpu and not has_duration and quote_asked and not words.rate:
                return Decision("clarify", missing="duration")
            if has_model and not has_gpu and has_duration and money:
                return Decision("quote")  # "how much to run llama 70b for a week": the fit's cheapest, quoted
            if not has_gpu and has_duration and money and (words.calculate or not words.discount):
                return Decision("clarify", missing="gpu")
            if not has_gpu and not has_model and words.calculate and not words.discount and words.rental:
                return Decision("clarify", missing="gpu")
            if has_model and not has_gpu and (not words.price or (WHICH_GPU.search(text) and not has_duration)):
                return Decision("fit")  # «какая карта лучше для llama 70b по цене»: the fit's cheapest configurations
            if has_gpu or words.discount or words.price_list or words.price_cover \
                    or (words.rental and (words.price or (sem == "price" and words.asks_us))):
                return Decision("price")
            if not has_model and sem == "price" and words.lead(sem) >= CLEAR_MARGIN and (words.asks_us or words.price):
                return Decision("price")  # «ваши цены?», "how much do you charge": the whole price list
        if has_gpu and ((sem == "price" and words.lead(sem) >= CLEAR_MARGIN) or HAVE_YOU.search(text)) \
                and not spec_fields_asked(text):
            return Decision("price")  # «есть ли b200?»: whether and at what price it is rented
        # "is nvlink available on your h100s?": a figure of the GPU asked, not whether it is rented
        if words.availability and (has_gpu or sem == "price") and not (has_gpu and spec_fields_asked(text)):
            return Decision("price")
        # a model alone is a fit question when asked as one ("flux capacitor" names a model's family, no more)
        if has_model and (words.fit or (sem == "fit" and words.lead(sem) >= CLEAR_MARGIN)):
            return Decision("fit")
        if distinct >= 2 and (words.compare or sem in ("compare", "spec", "fit") or spec_fields_asked(text)):
            return Decision("compare")
        if has_gpu and spec_fields_asked(text) and not words.strong_fit:
            return Decision("spec")
        if (words.strong_fit or words.train_on) and not has_model and has_gpu:
            # «ddp на двух картах по 24 гб — влезет модель побольше?»: whether a technique makes it fit is the
            # technique's question; with no concept named, which model to fit
            if self._concept_named(text):
                return Decision("glossary")
            if self._unknown_version(text):
                return Decision("fit")  # «stable diffusion 3.5» on a 3060: the catalog lacks that version, said so
            return Decision("clarify", missing="model")
        if topic is not None and (sem in ("lifecycle", "rule", "price", "quote") or topic != "rent"):
            return Decision("lifecycle")
        follow = self.intents.classify_question(text, previous)
        if follow.kind == "gpu_spec":
            return Decision("spec")
        # "when i rent an instance do i get root access?": a rental word in passing asks no price of us
        if follow.kind == "price" and (has_gpu or words.price or words.asks_us):
            return Decision("price")
        if not has_gpu and not has_model and self._unreadable(text):  # «ыврпаолд жэжэ»: typed at random
            return Decision("refusal", refusal="unreadable")
        if words.insult and not has_gpu and not has_model and not has_duration:  # an insult asks nothing
            return Decision("refusal", refusal="hostile")
        if semantic is not None and not has_gpu and not has_model:
            # a long how/why question mentioning "бот" is about a concept, not small talk with us
            long_question = words.explain and len(text.split()) > 10
            # what this bot does is asked of it («что ты умеешь», "what can you do", "help"); a longer question
            # about bots or models in general («как бот находит нужный кусок документа…») asks about a concept
            # as is a how-to of a named thing («как пользоваться optuna?»)
            long_question = long_question or (sem == "help" and not words.addressed
                                              and (len(text.split()) > 5 or NAMED_THING.search(text) is not None))
            long_question = long_question or (sem == "complaint" and len(text.split()) > 10
                                              and ASKS_SOMETHING.search(text) is not None
                                              and ABOUT_US.search(text) is None)
            if sem in SMALL_TALK and semantic.score >= SMALL_TALK_MIN_SCORE and not long_question \
                    and words.lead(sem, SMALL_TALK) >= CLEAR_MARGIN \
                    and not QUOTED.search(text):  # "translate 'good morning'": quoted words are not said to us
                return Decision("smalltalk", smalltalk=sem)
            if sem == "off_topic" and semantic.score >= OFF_TOPIC_MIN_SCORE and words.lead(sem) >= CLEAR_MARGIN:
                return Decision("refusal", refusal="off_topic")
            if sem == "price" and words.lead(sem) >= CLEAR_MARGIN and words.rental and words.asks_us:
                return Decision("price")
        # «почему на h100 загрузка gpu 40%?»: a cause asked, with the one GPU it happens on as context
        why_on_a_gpu = words.explain and distinct < 2 and not spec_fields_asked(text)
        if has_gpu and sem in ("spec", "compare") and not why_on_a_gpu:
            return Decision("spec")
        # "need gpus for a hackathon this weekend, what do you suggest?", «ок а если на месяц с коммитом?»: a rental's
        # length (or way of paying) with no GPU or model named: which GPU and how many, not a glossary concept
        if has_duration and not has_gpu and not has_model and not is_definition_question(text) \
                and not words.naming and not words.explain and not (previous and reads_as_follow_up(text)) \
                and (RENT_ASKED.search(text) or NEED_GPUS.search(text)
                     or (slots.pricing is not None and len(text.split()) <= SHORT_REQUEST_WORDS)):
            return Decision("clarify", missing="gpu")
        return Decision("glossary")

    def _unreadable(self, text: str) -> bool:
        """A short message of Cyrillic letters none of which is a Russian word, a slang word customers use
        or a word of the glossary: typed at random, not a question (asked last, after every route had its say)."""
        if re.search(r"[0-9]", text) or len(text.split()) > 4:
            return False
        found = [word.lower().replace("ё", "е") for word in _CYRILLIC_WORD.findall(text)]
        latin = [word.lower() for word in _LATIN_WORD.findall(text)]
        if not found:
            return False  # English alone is read by the router; a Latin word here only if Cyrillic is there too
        vocabulary = self.intents.rules.vocabulary()
        return not any(is_russian_word(word) or word in KNOWN_SLANG or word in vocabulary for word in found) \
            and not any(_VOWEL.search(word) for word in latin)  # "ldkfj" beside «ыыыы»: no vowel, no word

    # ---- building the reply -----------------------------------------------------------------------------
    def _build(self, text: str, lang: Lang, decision: Decision, routing: Routing, previous: Sequence[str]) -> Reply:
        slots = routing.slots
        route = decision.route
        if route == "quote":
            return self._quote(text, lang, routing)
        if route == "fit" and decision.largest and slots.gpus:
            gpu = slots.gpus[0]
            results = largest_fitting(self.fit, gpu.id, gpu.count or slots.count or 1, family_named(self.fit, text))
            return FitReply(text, lang, routing, results=results, currency=self.fit.currency, largest=True)
        if route == "fit":
            return self._fit(text, lang, routing)
        if route == "compare":
            aspect = aspect_asked(text)
            gpu_ids = fastest_rented(self.data, aspect) if decision.fastest else slots.gpu_ids
            # "8x a100 or 4x h100": sets, when each GPU has its count and they are not all one
            distinct = list({gpu.id: gpu for gpu in slots.gpus}.values())
            counts = [gpu.count for gpu in distinct]
            sets = not decision.fastest and len(distinct) == len(gpu_ids) \
                and all(count is not None for count in counts) and any(count != 1 for count in counts)
            comparison = compare_gpus(self.data, gpu_ids, aspect, [count or 1 for count in counts] if sets else ())
            return CompareReply(text, lang, routing, comparison)
        if route == "clarify":
            return self._clarify(text, lang, routing, decision.missing or "duration")
        if route == "rule":
            rules = tuple(self.intents.rules.match(text))
            if not rules and decision.billing is not None:  # the glossary has no rule on it: the product's own
                return LifecycleReply(text, lang, routing, answer_lifecycle(decision.billing, self.intents.rules))
            return CatalogReply(text, lang, routing, Intent("rule", text, rules=rules))
        if route == "price":
            intent = self.intents.price_intent(text)
            return CatalogReply(text, lang, routing, intent)
        if route == "spec" and decision.about == "model_context":
            models = [slots.model] if slots.model is not None else [model.id for model in self._family_sizes(text)]
            return CatalogReply(text, lang, routing, Intent("model_spec", text, model_ids=tuple(models)))
        if route == "spec":
            intent = self.intents.classify_question(text, previous)
            if intent.kind != "gpu_spec":
                named = self.intents.gpus_named(text)
                intent = Intent("gpu_spec", text, gpu_ids=tuple(spec.id for spec in named),
                                spec_fields=spec_fields_asked(text) or ("memory", "bandwidth", "compute"))
            return CatalogReply(text, lang, routing, intent)
        if route == "lifecycle":
            topic = decision.lifecycle or lifecycle_topic(text) or ("list" if LISTING.search(text) else "rent")
            return LifecycleReply(text, lang, routing, answer_lifecycle(topic, self.intents.rules))
        if route == "smalltalk":
            return SmallTalkReply(text, lang, routing, decision.smalltalk or "help")  # type: ignore[arg-type]
        if route == "refusal":
            reason = {"unreadable": "pipeline_no_words", "hostile": "pipeline_hostile",
                      "other_provider": "pipeline_other_provider", "payment_method": "pipeline_payment_method",
                      "releases": "pipeline_releases", "location": "pipeline_location", "sla": "pipeline_sla",
                      "trial": "pipeline_trial",
                      "time_estimate": "pipeline_time_estimate",
                      }.get(decision.refusal or "", "pipeline_off_topic")
            if decision.refusal == "versions":
                return RefusalReply(text, lang, routing, Phrase.of("pipeline_versions", about=decision.about or ""))
            if decision.refusal == "zero_count":
                return RefusalReply(text, lang, routing,
                                    Phrase.of("quote_err_bad_count", max=self.quotes.prices().max_gpus_per_quote))
            if decision.refusal == "currency":
                return RefusalReply(text, lang, routing,
                                    Phrase.of("pipeline_currency", currency=self.data.prices.current().currency))
            return RefusalReply(text, lang, routing, Phrase.of(reason))
        semantic = routing.semantic
        topical = (semantic is not None and semantic.route == "glossary" and semantic.margin >= CLEAR_MARGIN) \
            or CATCH.search(text) is not None  # the catch of a thing it names ("spot is cheaper, what's the catch?")
        return GlossaryReply(text, lang, routing, topical=topical)

    def _quote(self, text: str, lang: Lang, routing: Routing) -> QuoteReply:
        slots = routing.slots
        try:
            if slots.years is not None and slots.duration is None:
                limit = self.quotes.prices().max_duration_days
                raise QuoteInputError(f"Automatic quotes go up to {limit} days.", [], "duration", "too_long",
                                      days=limit)
            assert slots.duration is not None
            asked = list({gpu.id: gpu for gpu in slots.gpus}.values())  # one per GPU, as first written
            min_memory_gb = None
            memory_in_total = False
            if not asked:  # what it must have: every rented GPU with that memory (any, when none is said)
                size = MEMORY_SIZE.search(text)
                min_memory_gb = int(size.group(1)) if size is not None else None
                catalog = self.data.gpus
                asked = [GpuSlot(gpu_id, catalog.get(gpu_id).name, None) for gpu_id in self.data.prices.rentable_ids()
                         if min_memory_gb is None or catalog.get(gpu_id).memory_gb >= min_memory_gb]
                if not asked and min_memory_gb is not None and slots.count is None:
                    # "I need 640GB of VRAM for a week": no card has it, so it is the total; each GPU as many
                    # times as it takes to add up to it
                    memory_in_total = True
                    needed = {gpu_id: math.ceil(min_memory_gb / catalog.get(gpu_id).memory_gb)
                              for gpu_id in self.data.prices.rentable_ids()}
                    # the sets one server holds first: a model split over more cards crosses servers
                    most = GPUS_PER_SERVER if min(needed.values()) <= GPUS_PER_SERVER \
                        else self.quotes.prices().max_gpus_per_quote
                    asked = [GpuSlot(gpu_id, catalog.get(gpu_id).name, count) for gpu_id, count in needed.items()
                             if count <= most]
                if not asked:
                    raise QuoteInputError(f"No GPU we rent has {min_memory_gb} GB.", [], "gpu", "no_gpu_with_memory",
                                          gb=min_memory_gb)
            fitted = None
            lighter: list[tuple[str, QuoteRequest, Quote]] = []
            budget = budget_asked(text) if not slots.gpus and slots.model is None else None
            if budget is not None:
                asked = self._within_budget(budget, slots)
                if not asked:
                    raise QuoteInputError(f"No GPU we rent fits a budget of {budget}.", [], "gpu", "over_budget",
                                          budget=f"{budget.normalize():f} {self.quotes.prices().currency}")
            if not slots.gpus and slots.model is not None:
                # "how much to run llama 70b for a week": the configurations the fit finds cheapest, each quoted
                fit = self.fit.fit(normalise(text))
                asked = [GpuSlot(option.gpu_id, option.gpu_name, option.count) for option in fit.cheapest]
                fitted = f"{fit.request.model.name} · {WEIGHT_FORMATS[fit.request.quant].label}"
                for way, option in fit.lighter:  # adapters instead of full training, compressed weights to serve
                    cheaper = self.quotes.parse(_request_text(option.gpu_id, option.count, slots)).request
                    lighter.append((way, cheaper, self.quotes.preview(cheaper)))
                if not asked:
                    raise QuoteInputError(f"Nothing we rent fits {fitted}.", [], "gpu", "nothing_fits",
                                          model=fitted)
            options = []
            for gpu in asked:
                # "8 A100 или 4 H100": each its own count; "A100 или H100 на месяц, 4 штуки": the one said
                # (a count of 0 is written as said, so that the quote engine refuses it: "0 h100" is no one GPU)
                said = gpu.count if gpu.count is not None else (
                    slots.count if len(asked) == 1 or slots.loose_count is not None or not slots.gpus else None)
                count = said if said is not None else 1
                request = self.quotes.parse(_request_text(gpu.id, count, slots)).request
                options.append((request, self.quotes.preview(request)))
        except QuoteInputError as exc:
            return QuoteReply(text, lang, routing, error=exc)
        except FitInputError as exc:
            return QuoteReply(text, lang, routing, error=QuoteInputError(str(exc), [], "gpu", "nothing_fits",
                                                                         model=slots.model_name or ""))
        if budget is not None:  # the most memory the budget buys first
            options = sorted(options, key=lambda option: -option[1].gpu_count * self.data.gpus.get(
                option[0].gpu_id).memory_gb)[:MAX_QUOTE_OPTIONS]
        elif not slots.gpus:  # chosen here, not named: the cheapest few
            options = sorted(options, key=lambda option: option[1].total)[:MAX_QUOTE_OPTIONS]
        request, quote = options[0]
        return QuoteReply(text, lang, routing, quote=quote, request=request,
                          options=tuple(options) if len(options) > 1 else (), min_memory_gb=min_memory_gb,
                          chosen=not slots.gpus, memory_in_total=memory_in_total, fitted_model=fitted,
                          budget=budget, lighter=tuple(lighter))

    def _total(self, gpu_id: str, count: int, slots: Slots) -> Decimal:
        return self.quotes.preview(self.quotes.parse(_request_text(gpu_id, count, slots)).request).total

    def _within_budget(self, budget: Decimal, slots: Slots) -> list[GpuSlot]:
        """Each rented GPU as many times as the budget pays for over the term (the way of paying asked, else
        on demand), none where one is already over it."""
        catalog, most = self.data.gpus, self.quotes.prices().max_gpus_per_quote
        within = []
        for gpu_id in self.data.prices.rentable_ids():
            try:
                one = self._total(gpu_id, 1, slots)
            except QuoteInputError:
                continue  # no such way of paying for this GPU (spot is not offered for every GPU)
            count = min(int(budget // one), most) if one > 0 else 0
            while count >= 1 and self._total(gpu_id, count, slots) > budget:  # lines are rounded per line
                count -= 1
            if count >= 1:
                within.append(GpuSlot(gpu_id, catalog.get(gpu_id).name, count))
        return within

    def _fit(self, text: str, lang: Lang, routing: Routing) -> FitReply:
        slots = routing.slots
        currency = self.fit.currency
        try:
            if len(slots.gpus) >= 2 and slots.model is not None:
                # "a100 40gb или 80gb для llama 13b": the same request on each GPU, side by side
                results = tuple(self.fit.fit(_with_only_gpu(text, slots, gpu.id)) for gpu in slots.gpus)
                return FitReply(text, lang, routing, results=results, currency=currency)
            result = self.fit.fit(normalise(text), gpu_count=slots.count if len(slots.gpus) == 1 else None)
            return FitReply(text, lang, routing, results=(result,), currency=currency)
        except FitInputError as exc:
            return FitReply(text, lang, routing, error=exc, currency=currency)

    def _family_sizes(self, text: str) -> list[ModelSpec]:
        """A family named with no size («потянет ли 3090 квен?», "llama 3.1 on an h100"): a spread of its sizes,
        smallest first (of the version named, when one is), as the answers to "which model?"."""
        text = normalise(text)
        family = family_named(self.fit, text)
        if family is None:
            return []
        # the general models: a coder, vision or distilled variant is offered when asked for by name, not here
        models = sorted((model for model in language_models(self.fit, family)
                         if not _VARIANT.search(model.id)), key=lambda model: (model.params, model.id))
        version = re.search(rf"(?i)\b{re.escape(family)}\s*-?\s*(\d+(?:\.\d+)?)\b(?!\s*[bmkBMK]\b)", text)
        if version is not None:
            named = [model for model in models if re.match(rf"{re.escape(family)}-?{re.escape(version.group(1))}-",
                                                            model.id)]
            models = named or models
        if len(models) <= MAX_FAMILY_OPTIONS:
            return models
        step = (len(models) - 1) / (MAX_FAMILY_OPTIONS - 1)
        return [models[round(index * step)] for index in range(MAX_FAMILY_OPTIONS)]

    def _clarify(self, text: str, lang: Lang, routing: Routing, missing: Missing) -> ClarifyReply:
        slots = routing.slots
        known = ""
        if slots.gpus:
            known = f"{slots.count or 1} × {slots.gpus[0].name}"
        elif slots.duration is not None:
            known = slots.duration.describe(lang)
        if missing == "duration":
            options = tuple(ClarifyOption(label, label) for label in COMMON_DURATIONS[lang])
        elif missing == "gpu":
            rentable = self.quotes.rentable_gpu_ids()[:6]
            options = tuple(ClarifyOption(self.data.gpus.get(gpu_id).name.replace("NVIDIA ", ""), gpu_id)
                            for gpu_id in rentable)
        else:
            models = self._family_sizes(text) or [self.data.models.get(model_id) for model_id in COMMON_MODELS
                                                  if self.data.models.find(model_id) is not None]
            options = tuple(ClarifyOption(model.name, model.id) for model in models)
        route: Literal["quote", "fit"] = "fit" if missing == "model" else "quote"
        count = slots.count if missing == "gpu" and not slots.gpus and (slots.count or 0) > 1 else None
        return ClarifyReply(text, lang, routing, route=route, missing=missing, known=known, count=count,
                            options=options)


def _request_text(gpu_id: str, count: int, slots: Slots) -> str:
    """The quote request for ``count`` of a GPU over the term and way of paying the slots say."""
    text = f"{gpu_id} x{count} {_duration_text(slots)}"
    return f"{text} {slots.pricing.value}" if slots.pricing is not None else text


def _duration_text(slots: Slots) -> str:
    assert slots.duration is not None
    return " ".join(format_amount(amount, unit, "en") for amount, unit in slots.duration.parts)


def _with_only_gpu(text: str, slots: Slots, gpu_id: str) -> str:
    """The fit request with one GPU: the model and options as written, the GPU given explicitly."""
    count = next((gpu.count for gpu in slots.gpus if gpu.id == gpu_id and gpu.count), slots.count)
    assert slots.model is not None
    model = slots.model
    spec = slots.fit.request if slots.fit is not None else None
    parts = [model]
    if spec is not None:
        parts += [f"quant={spec.quant}", f"mode={spec.mode}"]
        if spec.context:
            parts.append(f"ctx={spec.context}")
    parts.append(f"gpu={gpu_id}")
    if count:
        parts.append(f"gpus={count}")
    return " ".join(parts)
