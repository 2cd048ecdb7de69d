"""What a message asks for, decided once for every front (Telegram, console chat, ``anchorgpu ask``).

* a command (``/fit …``): the front's command table handles it;
* a price question ("сколько стоит H100 в час?", «какая скидка за месяц?»): answered from the price list, never
  by the model — a small model asked for a price invents one with confidence ("скидка за месяц — 30%");
* a question about a company rule ("можно ли остановить аренду и не платить?"): the rule quoted verbatim
  from the glossary, with the yes or no it implies (:mod:`rag.rules`), never by the model;
* whether a GPU is rented ("можно ли арендовать B200?", "do you have MI300X?"): the price list;
* a fit question ("влезет ли mixtral в две A100?", «сколько памяти нужно для llama 3 70b?») that names a
  model the fit engine knows: the fit engine;
* a question about a GPU's specifications ("сколько памяти у H100?"): the GPU catalog;
* anything else: a glossary question for the answerer.

The order is the policy: a price question is a price question even when it also names a model.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from gpu.catalog import GPUSpec, normalize_name
from gpu.data import GpuData
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService
from rag.context import looks_like_follow_up
from rag.rules import RuleAnswer, RuleBook

IntentKind = Literal["command", "price", "rule", "fit", "gpu_spec", "model_spec", "glossary"]
# What a reply cites besides glossary entries: a catalog, named in --json by its data file
CatalogSource = Literal["price_list"]
CATALOG_FILES: dict[CatalogSource, str] = {"price_list": "data/prices.yaml"}
SpecField = Literal["memory", "bandwidth", "interconnect", "compute", "architecture", "power"]

PRICE_QUESTION = re.compile(
    r"(?i)(\bprice[sd]?\b|\bpricing\b|\$|\busd\b|\bdollars?\b|\bруб\w*|₽|\bдоллар\w*"
    r"|\bhow\s+much\b[^?.!]{0,60}\b(cost|costs|rent|rental|pay|charge|charges)\b"
    r"|\bcosts?\b[^?.!]{0,40}\b(rent|rental|per\s+hour|an?\s+hour|hourly|per\s+month|per\s+day)\b"
    r"|\b(rent|rental|renting)\b[^?.!]{0,40}\bcosts?\b"
    r"|\bwhat\s+does\b[^?.!]{0,60}\bcost\b|\bcosts?\b[^?.!]{0,20}\bon[\s-]demand"
    r"|\bhourly\s+(rate|price|cost)|\brate\s+per\s+hour|\bper[\s-]hour\s+(rate|price|cost)"
    r"|\bцен[аыуе]?\b|\bцены\b|\bстоимост\w*|сколько\s+(стоит|стоят|будет\s+стоить)|\bпрайс\w*|\bрасценк\w*"
    r"|\bпоч[её]м\b|\bпо\s+ч[её]м\b|\bтариф\w*|\bскидк\w*|\bdiscount\w*|сколько\s+(\w+\s+)?денег|по\s+деньгам|how\s+much\s+money"
    r"|\brate\s+(card|sheet|list)s?\b|\bprice\s*(list|sheet)s?\b|\b(your|the)\s+rates\b|\btariffs?\b)")
# "можно ли арендовать B200?", "do you have MI300X?": whether a GPU is rented is the price list's to say
AVAILABILITY_QUESTION = re.compile(
    r"(?i)(арендова(?!нн)\w*|арендуе\w*|есть\s+ли\s+у\s+вас|у\s+вас\s+есть|сда[её]те|в\s+наличии|\brent\b|\brentable\b|"
    r"\bdo\s+you\s+(have|offer)\b|\bavailable\s+(for|to)\s+rent)")
# a price question is about renting compute: it names a GPU or rental words ("сколько стоит iPhone" is not)
# the cheapest GPU asked for, of some memory or of any: «самая дешёвая карта на 48 гб», "cheapest 80gb card"
CHEAPEST = re.compile(r"(?i)(\bcheapest\b|least\s+expensive|most\s+affordable|lowest[-\s]priced"
                      r"|сам\w+\s+(дешёв|дешев|бюджетн)\w*|дешевле\s+всего|наиболее\s+(дешёв|дешев)\w*)")
# a memory size as a lower bound: "more than 100gb", "at least 80 GB", «от 48 гб», «больше 40 гигов», "48gb+"
AT_LEAST = re.compile(r"(?i)\b(more\s+than|over|at\s+least|min(imum)?|>=?|above)\s+\d{2,3}\s*(gb|gib|gigs?)|"
                      r"\d{2,3}\s*(gb|gib)\s*\+|\b(от|больше|более|свыше|не\s+меньше|минимум)\s+\d{2,3}\s*"
                      r"(гб|гиб|гиг\w*|gb)|\d{2,3}\s*(гб|gb)\s+(и\s+больше|или\s+больше|and\s+(up|more)|or\s+more)")
MEMORY_SIZE = re.compile(r"(?i)\b(\d{2,4})\s*(gb|gib|гб|гиб|гиг\w*|gigs?)\b")
_GPU_MEMORY = re.compile(r"(?i)\bv?ram\b|\bvideo\s*memory|\bgpu\s+memory|\bmemory\b|памят\w*|видеопамят\w*")
GPUS_PER_SERVER = 8  # the usual most GPUs in one server (HGX, MI300X platforms): the sets a memory total prefers
RENTAL_WORDS = re.compile(r"(?i)(аренд|арендов|rent|\bgpu|гпу|видеокарт|карт[аыу]\b|инстанс|instance|сервер|server|"
                          r"\bчас|hour|spot|спот|committed|on-demand|по требованию|прайс|price list|quote|расч[её]т|"
                          r"скидк|discount)")
# "will it fit" and "how much memory / which GPU does it need": both are the fit engine's, once it knows the model
FIT_QUESTION = re.compile(
    r"\b(влез\w*|помест\w*|войд[её]т|хватит|fits?|vram)\b"
    r"|сколько\s+(видео)?памяти\s+(\w+\s+)?(нужно|надо|требуется|потребуется|займ[её]т|занима\w*|съест|ест|необходимо)"
    r"|(нужно|надо|требуется|потребуется|необходимо)\s+(\w+\s+){0,2}(видео)?памяти"
    r"|\bhow\s+much\s+(gpu\s+)?(memory|ram)\b|\b(memory|ram)\s+(do\s+i\s+need|is\s+needed|required|requirements?)"
    r"|\b(как\w*|сколько)\s+(видеокарт\w*|gpu|гпу|карт\w*)\s+(\w+\s+)?(нужн\w*|надо|потребуется|требуется)"
    r"|\b(what|which)\s+gpus?\s+(do\s+i\s+need|is\s+needed|should\s+i|for)\b|\bhow\s+many\s+gpus\b"
    r"|на\s+ч[её]м\s+(запустить|поднять|развернуть)",
    re.IGNORECASE)
COMMAND = re.compile(r"^/([A-Za-z0-9_]{1,32})(@\w+)?(?:\s+|$)")
SPEC_FIELDS: dict[SpecField, re.Pattern[str]] = {
    "memory": re.compile(r"(?i)(памят|vram|врам|объ[её]м|\bгб\b|гигабайт|\bgb\b|\bgib\b|memory|how\s+big|hbm|gddr)"),
    "bandwidth": re.compile(r"(?i)(пропускн|bandwidth|скорост\w*\s+памят|memory\s+speed|тб/с|tb/s|гб/с|gb/s)"),
    "interconnect": re.compile(r"(?i)(nvlink|interconnect|связ[ьи]|шин[аыу]|infinity\s+fabric|соединен|между\s+карт)"),
    "compute": re.compile(r"(?i)(tflops|терафлоп|флопс|flops|производительн|\bfp8\b|\bbf16\b|\bfp16\b|compute|"
                          r"performance|вычислительн\w*\s+мощн)"),
    # "Ada" alone asks for the architecture; in "RTX 6000 Ada" it is the GPU's name
    "architecture": re.compile(r"(?i)(архитектур|поколени|architecture|generation|\bhopper\b|\bampere\b|"
                               r"\bblackwell\b|(?<!\d\s)(?<!\d)(?<!\d-)\bada\b|\bcdna)"),
    "power": re.compile(r"(?i)(\btdp\b|\bтдп\b|энергопотреб|потребля\w*|потреблени|мощност\w*\s+(в\s+)?ватт|\bватт|"
                        r"по\s+питани|\bпитани[ея]\b|жр[её]т\s+(\w+\s+)?(электричеств|энерги|ватт|питани)|"
                        r"\bwatts?\b|power\s+(draw|consumption)|\bpower\b)"),
}
MAX_SCANNED_WORDS = 60


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    text: str  # the question, or a command's arguments
    command: str | None = None  # "fit" for "/fit …"
    gpu_ids: tuple[str, ...] = ()  # price questions: the rentable GPUs named; spec questions: every GPU named
    unpriced: tuple[str, ...] = ()  # price questions: catalog GPUs named that are not rented
    rules: tuple[RuleAnswer, ...] = ()  # rule questions: the rules it is about, with their yes/no
    spec_fields: tuple[SpecField, ...] = ()  # spec questions: what is asked (memory, bandwidth…)
    # price questions: the cheapest GPU asked for (the rented ones cheapest first), of at least this memory
    cheapest: bool = False
    min_memory_gb: int | None = None
    # price questions: ``min_memory_gb`` is more than any rented GPU has, so a total over several ("640GB of VRAM")
    memory_in_total: bool = False
    model_ids: tuple[str, ...] = ()  # model spec questions: the catalog models asked about ("context of llama 3.1")

    @property
    def catalogs(self) -> tuple[CatalogSource, ...]:
        """What a rule answer cites besides the glossary: a rule's ``derived`` statement (the terms' hours:
        24 / 168 / 720, :data:`gpu.prices.TERM_HOURS`) is the price list's, so an answer stating one cites it."""
        return ("price_list",) if any(answer.rule.derived for answer in self.rules) else ()


OUT_OF_MEMORY = re.compile(r"(?i)\b(cuda\s+)?out\s+of\s+(gpu\s+)?memory\b|\boom\b|\bнехватк\w*\s+(видео)?памяти")


def spec_fields_asked(question: str) -> tuple[SpecField, ...]:
    """What a spec question asks; "memory bandwidth" asks for the bandwidth, not also the memory size."""
    asked: list[SpecField] = []
    rest = OUT_OF_MEMORY.sub(" ", question)  # «вылетает out of memory»: an error met, not the memory asked
    fields: tuple[SpecField, ...] = ("bandwidth", "interconnect", "compute", "architecture", "power", "memory")
    for name in fields:
        pattern = SPEC_FIELDS[name]
        if pattern.search(rest):
            asked.append(name)
            rest = _SPEC_PHRASE.get(name, pattern).sub(" ", rest)
    order = list(SPEC_FIELDS)
    return tuple(sorted(asked, key=order.index))


# the whole phrase a field was asked with, removed before looking for the next field
_SPEC_PHRASE: dict[str, re.Pattern[str]] = {
    "bandwidth": re.compile(r"(?i)(memory\s+bandwidth|bandwidth\s+of\s+(the\s+)?memory|пропускн\w*\s+способн\w*"
                            r"(\s+памят\w*)?|скорост\w*\s+памят\w*|memory\s+speed|пропускн\w*)"),
}


class IntentClassifier:
    def __init__(self, data: GpuData, fit: FitService, rules: RuleBook) -> None:
        self.data = data
        self.fit = fit
        self.rules = rules

    def classify(self, text: str) -> Intent:
        text = text.strip()
        command = COMMAND.match(text)
        if command:
            return Intent("command", text[command.end():].strip(), command=command.group(1).lower())
        return self.classify_question(text)

    def classify_question(self, question: str, previous: Sequence[str] = ()) -> Intent:
        """The intent of a question (no command parsing: ``/ask TEXT`` and addressed group messages).

        ``previous``: the user's earlier questions in this conversation, the last one first. A follow-up
        that asks for a spec ("а какая у неё пропускная способность?" after "что такое H200?") takes its GPU
        from the last of them that names one, across follow-ups that name none ("а сколько у неё памяти?"
        next), but not across a question on something else.
        """
        intent = self._classify(question.strip())
        if intent.kind == "glossary" and previous and looks_like_follow_up(question):
            fields = spec_fields_asked(question)
            named = self._gpus_followed(previous) if fields else []
            if named and not self.gpus_named(question):
                return Intent("gpu_spec", question.strip(), gpu_ids=tuple(spec.id for spec in named),
                              spec_fields=fields)
        return intent

    def _gpus_followed(self, previous: Sequence[str]) -> list[GPUSpec]:
        for earlier in previous:
            named = self.gpus_named(earlier)
            if named or not looks_like_follow_up(earlier):
                return named
        return []

    def _classify(self, question: str) -> Intent:
        price = self._price(question) if PRICE_QUESTION.search(question) else None
        if price is not None:
            return price
        rules = self.rules.match(question)
        if rules:
            return Intent("rule", question, rules=tuple(rules))
        # after the rules: «я арендовал H100 и остановил его, платить?» is one
        price = self._price(question) if AVAILABILITY_QUESTION.search(question) else None
        if price is not None:
            return price
        if FIT_QUESTION.search(question) and self._fit_parses(question):
            return Intent("fit", question)
        fields = spec_fields_asked(question)
        if fields:
            named = self.gpus_named(question)
            if named:
                return Intent("gpu_spec", question, gpu_ids=tuple(spec.id for spec in named), spec_fields=fields)
        return Intent("glossary", question)

    def _price(self, question: str) -> Intent | None:
        """A price (or "do you rent it") question about renting compute: the rentable GPUs it names, and those
        it names that are not rented; None when it names no GPU and no rental word ("сколько стоит iPhone")."""
        named = [spec.id for spec in self._named(question)]
        if not named and not RENTAL_WORDS.search(question):
            return None
        rentable = set(self.data.prices.rentable_ids())
        return Intent("price", question, gpu_ids=tuple(gpu for gpu in named if gpu in rentable),
                      unpriced=tuple(gpu for gpu in named if gpu not in rentable))

    def memory_total(self, question: str) -> int | None:
        """The memory asked, in GB, when it is more than any GPU we rent has: a total over several GPUs."""
        size = MEMORY_SIZE.search(question)
        if size is None or not _GPU_MEMORY.search(question) or self.gpus_named(MEMORY_SIZE.sub(" ", question)):
            return None  # "re-upload 500gb every time": data, not GPU memory
        return int(size.group(1)) if int(size.group(1)) > self._largest_rented_gb() else None

    def _largest_rented_gb(self) -> float:
        return max((self.data.gpus.get(gpu_id).memory_gb for gpu_id in self.data.prices.rentable_ids()), default=0)

    def price_intent(self, question: str) -> Intent:
        """The price-list reply to a price question: the GPUs it names, rented or not (none: the whole list);
        the cheapest asked for ("cheapest 80gb card"): the rented GPUs cheapest first, of that memory or more
        (a size names no one GPU here: the catalog's first 80 GB card is not the cheapest one)."""
        intent = self._cheapest_or_named(question)
        # more memory asked than any GPU we rent has: the sets of GPUs adding up to it (decided here, once)
        if intent.cheapest and not intent.gpu_ids and (intent.min_memory_gb or 0) > self._largest_rented_gb():
            return replace(intent, memory_in_total=True)
        return intent

    def _cheapest_or_named(self, question: str) -> Intent:
        intent = self._price(question) or Intent("price", question)
        total = self.memory_total(question)
        if total is not None and not intent.gpu_ids and not intent.unpriced:
            return Intent("price", question, cheapest=True, min_memory_gb=total)
        size = MEMORY_SIZE.search(question)
        if size is not None and AT_LEAST.search(question) and not self.gpus_named(MEMORY_SIZE.sub(" ", question)):
            # "what gpus do you have with more than 100gb?", «есть карты на 80 гб и больше?»: a bound, not a
            # card named by its memory; the rented GPUs of that memory or more, cheapest first
            return Intent("price", question, cheapest=True, min_memory_gb=int(size.group(1)))
        if not CHEAPEST.search(question):
            return intent
        if size is not None:
            return Intent("price", question, cheapest=True, min_memory_gb=int(size.group(1)))
        # "cheapest h100": every variant of the family it names (the PCIe one is cheaper than the SXM)
        rentable = set(self.data.prices.rentable_ids())
        named = tuple(spec.id for spec in self.gpus_named(question) if spec.id in rentable)
        return replace(intent, cheapest=True, gpu_ids=named)

    def _fit_parses(self, question: str) -> bool:
        try:
            self.fit.parser.parse(question)
        except FitInputError:
            return False
        return True

    def gpus_named(self, text: str) -> list[GPUSpec]:
        """Every catalog GPU named in free text; a family name ("H100") names each of its variants
        (H100 SXM, H100 PCIe…), since a spec question about it should not pick one silently."""
        catalog = self.data.gpus
        found: list[GPUSpec] = []
        for spec, spelling in self._named_with_spelling(text):
            family = _family(spec.name)
            if normalize_name(spelling) != family:  # "A100 80GB" names one variant, "A100" all of them
                if spec not in found:
                    found.append(spec)
                continue
            variants = [other for other in catalog.all() if _family(other.name) == family]
            for variant in sorted(variants, key=lambda other: other.id != spec.id):
                if variant not in found:
                    found.append(variant)
        return found

    def _named(self, text: str) -> list[GPUSpec]:
        return [spec for spec, _ in self._named_with_spelling(text)]

    def _named_with_spelling(self, text: str) -> list[tuple[GPUSpec, str]]:
        """GPUs named in the text, each with the words that named it (longest spelling first)."""
        words = re.findall(r"[\w\-]+", text.lower())[:MAX_SCANNED_WORDS]
        candidates = ([" ".join(t) for t in zip(words, words[1:], words[2:], strict=False)]
                      + [f"{a} {b}" for a, b in itertools.pairwise(words)] + words)
        catalog = self.data.gpus
        found: dict[str, tuple[GPUSpec, str]] = {}
        covered: list[str] = []
        for candidate in candidates:
            spec = catalog.find(candidate)
            if spec is None and (spec := catalog.find_named(candidate)) is not None:
                candidate = candidate[:-1]  # "4 a100s": the A100, in the plural
            if spec is None or spec.id in found or any(candidate in longer for longer in covered):
                continue
            found[spec.id] = (spec, candidate)
            covered.append(candidate)
        return list(found.values())


_NOT_FAMILY = re.compile(r"^(nvidia|amd|geforce|instinct|sxm\d?|pcie|nvl|\d+\s*gb)$")


def _family(name: str) -> str:
    """"NVIDIA H100 SXM 80GB", "NVIDIA H100 PCIe 80GB" → "h100": variants differ by form factor or memory."""
    words = [word for word in name.lower().split() if not _NOT_FAMILY.match(word)]
    return normalize_name(" ".join(words)) or normalize_name(name)
