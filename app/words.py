"""The word classes of a message the reply pipeline reads beside the semantic router.

The router (:mod:`app.router`) says what the words ask; these say what certain words are, and they decide the
boundaries e5-small scores within a hair of each other (its leads are 0.005-0.05): money asked
(«сколько будет стоить», "quote me"), a comparison (vs, «или», «быстрее»), a rate («в час») against a
rental length, a payment against a "paid period", a "how to", an attempt to re-instruct the bot. Classes of
words, never one customer's sentence.
"""

from __future__ import annotations

import re
from decimal import Decimal

from app.intents import CHEAPEST, PRICE_QUESTION, RENTAL_WORDS
from app.router import RouteScores
from app.slots import Slots

# which of two costs less: «что дешевле», "which is cheaper", "costs less", «выгоднее»
CHEAPER = re.compile(r"(?i)(дешевле|дороже|выгодн\w*|\bcheaper\b|\bpricier\b|\b(costs?|cost)\s+less\b|"
                     r"\bless\s+expensive|\bmore\s+expensive|\bbetter\s+(deal|value)|\bcheapest\b)")
# "посчитай", "quote me", «во сколько обойдётся», "what would it cost": a computed total is asked for
CALCULATE = re.compile(
    r"(?i)(посчита\w*|рассчита\w*|расчита\w*|расч[её]т\w*|обойд[её]тся|обойдется|выйдет|итог\w*|\bquote\b"
    r"|\bestimate\w*|calculat\w*|(?<!params\s)(?<!parameters\s)(?<!weights\s)\btotal\b(?!\s+(params|parameters|weights|experts|layers|tokens))|сколько\s+(будет|выйдет|я\s+)?(заплач\w*|плат\w*)|сколько\s+(будет|выйдет)"
    r"|сколько\s+(\w+\s+){0,3}(выйдет|обойд\w+)|how\s+much\s+would\s+it\b"
    r"|how\s+much\s+(would|will|for|do\s+i\s+pay|would\s+i\s+pay)|what\s+would\s+\S+(\s+\S+)?\s+cost"
    r"|(?<!power\s)(?<!thermal\s)(?<!energy\s)(?<!memory\s)(?<!vram\s)\bbudget\b"
    r"|(?<!энергетический\s)(?<!тепловой\s)бюджет(?!\w*\s+(по\s+)?(питани|мощност|энерг|памят|тепл))|сколько\s+за\b|\b(rough|ballpark|approximate|total)\s+(cost|price|estimate|figure)"
    r"|\bcost\s+(for|of)\s+(a|an|one|two|\d+)\b|\b(a|the)\s+(number|figure|ballpark)\s+for\b"
    r"|what'?s\s+it\s+(gonna|going\s+to)\s+(be|cost)"
    # "what would 8 h100s run me", "how much will that run us": the idiom of a cost
    r"|\b(would|will|gonna|does|do)\b[^?.!]{0,40}\brun\s+(me|us)\b)")
# a price asked in other words than the price list's own: «сколько это стоит», "how much is it"
MONEY = re.compile(r"(?i)(сколько\s+(\w+\s+){1,3}(стоит|стоят|стоить)|how\s+much\s+(to|is\s+it|does\s+it)\b"
                   # "how much is an l4 per hour": a rate asked is a price, whatever the GPU
                   r"|how\s+much\s+(is|are)\b[^?.!]{0,40}(\b(per|an?|each|every)\s+(hour|hr|day|week|month)\b|\bhourly\b"
                   r"|/\s*(h|hr|hour)\b)"
                   # "how much per hour for the b200s", "how much an hour is an a100"
                   r"|\bhow\s+much\s+(per|an?|each|every|a\s+single)\s+(hour|hr|day|week|month)\b"
                   # "can i get 6 l4s from you guys? how much": the price asked in two words, last
                   r"|\bhow\s+much\s*[?!.]*\s*$"
                   # «хочу арендовать сервак на месяц, сколько?»: the same, in Russian
                   r"|\bсколько\s*[?!.]*\s*$)")
# the whole price list asked for: «прайс скиньте», "send me your rate card"
PRICE_LIST = re.compile(r"(?i)(\bпрайс\w*|прайс-лист\w*|\bрасценк\w*|\bтарифы\b|\bprice\s*(list|sheet)s?\b|"
                        r"\brate\s*(card|sheet|list)s?\b|\bpricing\s+(page|list|table)\b|\btariffs\b)")
COMPARE = re.compile(
    r"(?i)(\bvs\.?\b|\bversus\b|\bили\b|\bor\b|\bлучше\b|\bхуже\b|быстрее|медленнее|мощнее|\bfaster\b|\bslower\b"
    r"|\bbetter\b|\bworse\b|сравн\w*|\bcompar\w*|отлича\w*|\bdiffer\w*|разниц\w*|\bпротив\b|больше\s+памяти"
    r"|more\s+(memory|vram)|\bwhich\s+(one|is)\b|что\s+выбрать|какую\s+(взять|выбрать)"
    # a preference asked: "why pick h100 pcie over sxm", "should i go l40s over a100", «брать 4090 вместо a6000?»
    r"|\b(pick|choose|go|prefer|take|get|use)\b[^?.!]{0,30}\bover\b|\bвместо\b)")


class Signals:
    """The hard word classes of a message, read once."""

    def __init__(self, text: str, semantic: RouteScores | None) -> None:
        self.semantic = semantic
        self.price = bool(PRICE_QUESTION.search(text) or MONEY.search(text))
        self.calculate = bool(CALCULATE.search(text))
        self.price_list = bool(PRICE_LIST.search(text))
        self.rental = bool(RENTAL_WORDS.search(text))
        self.compare = bool(COMPARE.search(text))
        self.rate = bool(RATE.search(text))
        self.fit = bool(FIT_WORDS.search(text))
        self.strong_fit = bool(STRONG_FIT.search(text))
        self.train_on = bool(TRAIN_ON.search(text))
        # a fact about a model itself, said with no hardware word: who made it, what it was trained on, what it
        # uses or supports (no running verb: "does whisper handle russian?" is about whisper, not a GPU)
        self.model_fact = bool(MODEL_FACT.search(text)) and not HARDWARE.search(text) \
            and not STRONG_FIT.search(HANDLES.sub(" ", text))
        self.availability = bool(AVAILABILITY.search(text))
        self.cheapest = bool(CHEAPEST.search(text))
        self.cheaper = bool(CHEAPER.search(text))
        self.payment = bool(PAYMENT.search(PAID_PERIOD.sub(" ", text)))
        self.discount = bool(DISCOUNT.search(text))
        self.price_cover = asks_what_price_covers(text)
        self.other_provider = bool(OTHER_PROVIDER.search(text))
        # a price asked at another provider («сколько a100 стоит на runpod»): theirs, which we do not know
        provider = OTHER_PROVIDER.search(text)
        # or charged by it ("how much does runpod charge for an h100", «runpod берёт за h100»)
        self.at_other_provider = provider is not None and bool(
            AT_PLACE.search(text[:provider.start()]) or THEIR_PRICE.match(text[provider.end():]))
        self.payment_method = bool(PAYMENT_METHOD.search(text))
        self.currency = bool(CURRENCY.search(text))
        self.tax = bool(TAX.search(text))
        self.location = bool(LOCATION.search(text))
        self.sla = bool(SLA.search(text))
        self.trial = bool(TRIAL.search(text))
        self.how = bool(HOW.search(text))
        self.explain = bool(EXPLAIN.search(text))
        self.technique = bool(TECHNIQUE.search(text))
        self.asks_us = bool(ASKS_US.search(text)) or self.rate
        self.addressed = bool(ASKS_US.search(text) or ADDRESSED.search(text))
        self.naming = bool(NAMING.search(text))
        # a name asked of what follows it, with no running asked there: «учу 13b на двух 3090 и не влезает, как
        # называется, когда оптимизатор размазывают по картам?» (not «как называется модель, что влезет в 4090?»)
        named = NAMING.search(text)
        self.name_asked = named is not None and not STRONG_FIT.search(text[named.start():]) \
            and not LARGEST_MODEL.search(text[named.start():])
        self.largest_model = bool(LARGEST_MODEL.search(text))
        self.rent_request = bool(RENT_REQUEST.search(text))
        self.fastest = bool(FASTEST.search(text))
        self.version_trouble = version_trouble(text)
        self.release = bool(RELEASE.search(text))
        self.injection = bool(INJECTION.search(text))
        # said to us: «ты тупая железка», "you're a scam" — not "stupid question, but what is…"
        self.insult = bool(INSULT.search(text) and INSULT_TARGET.search(text))

    def lead(self, route: str | None, kin: tuple[str, ...] = ()) -> float:
        return self.semantic.lead(route, kin) if self.semantic is not None and route else 0.0

    def single_hour_rate(self, slots: Slots) -> bool:
        """«сколько стоит час A100»: the hourly price, not a one-hour rental to compute."""
        return slots.hours == 1 and slots.count is None


# what a fit question sounds like, in any words: the semantic router covers the rest
FIT_WORDS = re.compile(
    r"(?i)(влез\w*|помест\w*|войд[её]т|хватит|потян\w*|вытян\w*|вывез\w*|запуст\w*|заработа\w*|пойд[её]т|взлетит"
    r"|завед[её]тся|подн(ять|иму|им)\w*|развернуть|дообуч\w*|обуч\w*|файнтюн\w*|инференс\w*|\bfits?\b(?!\s+(better|best|more))|\brun\b|\brunning\b"
    r"|\bserve\b|\bserving\b|\bhost\b|\bload\b|\bwork\b|\bhandle\b|\bvram\b|\bmemory\b|памят\w*|\bнужн\w*|\bнуж(ен|на|но|ны)\b|\bпод\b|\bneed\b"
    r"|fine[\s-]?tun\w*|\btrain\w*|\blora\b|\bqlora\b|\binference\b|\bдля\b|\bfor\b|\bна\s+ч[её]м\b|\bwhich\s+gpu"
    r"|какую\s+(карт|gpu|видеокарт))")
# a model runs, trains or is served on a GPU: "will it run", «потянет», «запустится», «влезет»
STRONG_FIT = re.compile(
    r"(?i)(влез\w*|помест\w*|войд[её]т|хватит|потян\w*|вытян\w*|вывез\w*|запуст\w*|заработа\w*|пойд[её]т|взлетит"
    r"|завед[её]тся|дообуч\w*|файнтюн\w*|\bfits?\b(?!\s+(better|best|more))|\brun\b|\bserve\b|\bhost\b|\bhandle\b|fine[\s-]?tun\w*"
    # "will a 4080 be enough for it?", "is an a10 good enough for my model"
    r"|\b(be|is|are|good)\s+enough\s+for\b)")
# a training run asked to fit on GPUs named after it ("can our model be trained on 4 a100s?", «обучить нашу модель
# на двух 4090»): a fit question (kept apart from STRONG_FIT: "what was llama trained on?" asks the model's data)
TRAIN_ON = re.compile(r"(?i)\b(train|trained|training|обучить|обучать|обучаться|обучится|обучим)\b[^?.!]{0,25}"
                      r"\b(on|на)\s+(a\s+|an\s+|one\s+|two\s+|\d+\s*x?\s*|одн\w+\s+|дв\w+\s+|пар\w+\s+)?"
                      r"([a-zа-я]{0,3}\d{2,4}|mi\d{3}|b\d{3}|l40s?|t4|a10g?)s?\b")
# the model's own facts: its makers, its training, its parts and abilities (asked "does it …", «умеет ли …»)
MODEL_FACT = re.compile(
    r"(?i)\bwho(?:'?s)?\b|\bкто\b|\bкем\b|\btrained\s+on\b|\bwas\s+(it\s+)?trained\b|\bобучал(а|и|ась|ся)?\b"
    r"|\bобучен[аоы]?\b|\b(does|do|can|is)\s+(?!(i|we|you|u)\b)[^?.!]{0,40}\b(use|support|understand|speak|handle|know|recogni[sz]e"
    r"|transcribe|translate)s?\b|поддерживает|понимает|\bумеет\b|распозна[её]т|использует|\bзачем\b|\bwhy\b"
    r"|\bпочему\b"
    # the languages it knows: "is whisper english only?", «qwen мультиязычная?», «какие языки понимает»
    r"|\b(english|russian|german|french|spanish|chinese)[\s-]+only\b|\bmulti-?lingual\b|\b(which|what)\s+languages?\b"
    r"|мультиязычн\w*|многоязычн\w*|\bкаки[ех]\s+языка?х?\b|\bтолько\s+(на\s+)?(английск|русск)\w*"
    r"|\blanguages?\s+(other\s+than|besides|except|beyond)\b|\b(other|different|foreign|more)\s+languages\b"
    r"|\bnon-?english\b|\b(на\s+)?(други[ехм]|разны[ехм]|иностранн\w+)\s+языка?х?\b|\bкроме\s+(английск|русск)\w*")
# the hardware a model needs: a fact about it is then a fit question (memory, GPUs, cards, gigabytes)
HARDWARE = re.compile(
    r"(?i)\bvram\b|\bmemory\b|памят|\bgpus?\b|\bгпу\b|\bcards?\b|карт[аыуе]?\b|карточк|видеокарт|видюх|\bgb\b"
    r"|\bгб\b|\bгиг\w*|hardware|железо|\bжелез\w+|\bcpu\b|процессор|\bram\b|оператив|\bspeed\b|скорост|\bfast\b"
    r"|быстр|\bslow\b|медлен|тормоз")
HANDLES = re.compile(r"(?i)\bhandles?\b")
RATE = re.compile(r"(?i)((в|за|per|an?)\s+(час|hour|hr)\b|hourly|почасов|/\s*(h|hr|час)\b|\bчас\s+(аренды\s+)?\w+"
                  r"|\bстоит\s+час\b)")
PAYMENT = re.compile(r"(?i)(плат\w*|плач\w*|биллинг\w*|оплат\w*|деньг\w*|списыва\w*|списан\w*|возврат\w*"
                     r"|верн[уё]т\w*|refund\w*|\bpay|\bpaid\b|charg\w*|bill\w*|money|\bcost|стоим\w*|счет|сч[её]т|перерасч\w*|округл\w*|round\w*"
                     r"|начат\w*\s+час|started\s+hour|partial)")
LISTING = re.compile(r"(?i)(\bsee\b|\bcheck\b|посмотр\w*|\bleft\b|остал\w*|status|статус|\blist\b|список|\bmy\b"
                     r"|\bмои\b)")
DISCOUNT = re.compile(r"(?i)(скидк\w*|discount\w*)")
# another provider named: its prices and terms are not ours to state («а на aws дешевле?», "vs runpod")
OTHER_PROVIDER = re.compile(
    r"(?i)(\baws\b|\bamazon\b|\bec2\b|sagemaker|\bgcp\b|google\s+cloud|\bazure\b|runpod|vast\.?ai|coreweave"
    r"|paperspace|lambda\s*(labs|cloud)|\bhetzner\b|\bovh\w*|oracle\s+cloud|\bselectel\b|селектел\w*|yandex\s+cloud"
    r"|яндекс\w*\s+облак\w*|cloud\.ru|sbercloud|сбер\s*клауд\w*|immers\.?cloud|\bcolab\b|\bколаб\w*|\bамазон\w*"
    r"|\bавс\b|\bгугл\w*\s+клауд\w*|\bажур\w*|\bазур\w*|\bранпод\w*|\bother\s+(providers?|clouds?)\b"
    r"|\bдруги[хме]\s+(провайдер|облак)\w*|\bконкурент\w*|\bcompetitors?\b)")
# the provider as who charges: "runpod charges", "lambda's price", «runpod берёт», «у них цена»
THEIR_PRICE = re.compile(r"(?i)^\W*('?s\s+)?(\w+\s+)?(charg\w*|ask\w*|price\w*|pricing|rates?|bill\w*|бер[ёе]т|берут"
                         r"|просит|просят|стоит|цен\w*|прайс\w*)\b")
# the place a thing is at, said last before a provider's name («на runpod», "on aws", "at lambda")
AT_PLACE = re.compile(r"(?i)\b(на|в|во|у|on|at|from|in|via|with)\s*$")
# how a bill is paid: a method the glossary and the rules say nothing about («криптой», "paypal", «по счёту»)
PAYMENT_METHOD = re.compile(
    r"(?i)(\bкрипт\w*|\bcrypto\w*|bitcoin|биткоин\w*|\busdt\b|\bbtc\b|paypal|пейпал\w*|\bvisa\b|mastercard|\bмир\b"
    r"|банковск\w+\s+карт\w*|\bcredit\s+card|\bdebit\s+card|\bcard\s+payment|безнал\w*|наличн\w*|\bcash\b"
    r"|\bинвойс\w*|\binvoic\w*|\bwire\s+transfer|bank\s+transfer|банковск\w+\s+перевод\w*|по\s+сч[её]ту"
    r"|сч[её]т\w*\s+(на\s+оплату|для\s+юр)|юр\.?\s*лиц\w*|юрлиц\w*|\bvat\b|\bндс\b|способ\w*\s+оплат\w*"
    r"|payment\s+methods?|how\s+(can|do)\s+i\s+pay|как\s+(можно\s+)?(оплатить|заплатить|платить)"
    # «можно оплатить картой?», "can i pay by card?", "do you accept amex"
    r"|(оплат|заплат|плат)\w*\s+(\w+\s+)?(картой|карточкой|криптой|наличными|переводом|с\s+карты)"
    r"|\bpay\w*\s+(by|with|via|using)\s+(a\s+)?(card|credit|debit|crypto|bank|wire|check|cheque|amex|apple\s+pay"
    r"|google\s+pay)|\baccept\w*\s+(cards?|credit|crypto|amex|visa|paypal))")
# a budget for the rental: «бюджет 500 долларов», "I have $2000", "up to 300 usd", «до 1000 баксов»
BUDGET = re.compile(r"(?i)(?:бюджет\w*|budget|\bhave|\bесть|\bдо|up\s+to|within|max(?:imum)?|не\s+больше|не\s+более"
                    r"|в\s+пределах|under|уложиться\s+в|\bfor|\bза)\s*(?:of\s+|в\s+|около\s+|about\s+)?(?:\$\s*(?P<before>\d[\d\s,.]*\d|\d)"
                    r"|(?P<after>\d[\d\s,.]*\d|\d)\s*(?:\$|usd|долл\w*|бакс\w*|dollars?|bucks))")


def budget_asked(text: str) -> Decimal | None:
    """The money a customer can spend, when the message states one as a budget."""
    match = BUDGET.search(text)
    if match is None:
        return None
    digits = re.sub(r"[\s,]", "", match.group("before") or match.group("after") or "")
    try:
        amount = Decimal(digits)
    except ArithmeticError:
        return None
    return amount if amount > 0 else None


# what else a price may cover: "does the price include storage?", «трафик входит в стоимость?», "is storage extra?"
EXTRAS = re.compile(r"(?i)\b(storage|disks?|ssd|nvme|volumes?|traffic|egress|ingress|network|internet|ip\s+address\w*"
                    r"|public\s+ip|cpus?|vcpus?|ram|electricity|setup\s+fees?"
                    r"|хранилищ\w*|диск\w*|трафик\w*|сет[ьи]\b|интернет\w*|ip-?адрес\w*|\bцп\b|процессор\w*"
                    r"|оперативк\w*|оперативн\w+\s+памят\w*|электричеств\w*)")
# included in a price (said with a price word) or charged besides it (the words say so themselves)
INCLUDED = re.compile(r"(?i)\binclud\w*|включ\w*|входит|входят")
CHARGED_BESIDES = re.compile(r"(?i)\bextra\b|\bseparately\b|\bon\s+top\b|\bhidden\b|\bextra\s+charge\w*"
                             r"|отдельно|сверху|доплат\w*|дополнительн\w*\s+(плат|расход|сбор)\w*")
PRICE_WORD = re.compile(r"(?i)\bpric\w*|\bcosts?\b|\brates?\b|\bquotes?\b|\bpay\w*|\bcharg\w*|\bbill\w*"
                        r"|стоимост\w*|\bцен\w*|плат\w*|тариф\w*|сч[её]т\w*|расч[её]т\w*")
# fees besides the price asked about: "are there any hidden fees?", «есть скрытые платежи?»
FEES = re.compile(r"(?i)\b(hidden|extra|additional|other)\s+(fees?|costs?|charges?)\b|\bany\s+fees\b|\bcommissions?\b"
                  r"|\bскрыт\w*\s+(плат|комисси|расход|сбор|списани)\w*"
                  r"|\bдополнительн\w*\s+(плат|комисси|расход|сбор|списани)\w*|\bкомисси\w*")


def asks_what_price_covers(text: str) -> bool:
    """Whether a price covers more than the GPU (storage, traffic…), or what else is charged."""
    if FEES.search(text):
        return True
    if not EXTRAS.search(text):
        return False
    return bool(CHARGED_BESIDES.search(text) or (INCLUDED.search(text) and PRICE_WORD.search(text)))


# taxes and bookkeeping: neither the price list, the rules nor the glossary advise on them («какой налог платит ип»,
# "how do i deduct gpu rental from taxes"); VAT on our invoices is a payment question (PAYMENT_METHOD)
TAX = re.compile(r"(?i)(\bналог\w*|\bусн\b|\bндфл\b|\bбухгалтер\w*|\bбухучет\w*|\bбухуч[её]т\w*|\bамортизац\w*"
                 r"|\btax(es|ed|ation)?\b|\bdeduct\w*|\baccountant\w*|\bbookkeep\w*|\bdepreciat\w*)")
# something for free asked of us: a trial, credits, a grant, a startup programme (no rule or price states one)
TRIAL = re.compile(r"(?i)\bfree\s+(trial|credits?|tier|plan|hours?|test\w*|access|gpu\s+hours?)\b"
                   r"|\b(for|anything)\s+free\b|\b(student|students|academic|education\w*)\s+(plan|tier|pricing|price|rate)"
                   r"|\btrial\s+(period|access|run|credits?)|\b(is|are)\s+there\s+(a|any)\s+(free\s+)?trial"
                   r"|\bpromo\s*codes?\b|\bcredits?\s+for\s+(startups?|students?)"
                   r"|\b(startup|student|academic|research)\s+(program\w*|credits?|discounts?|grants?)"
                   r"|\bпробн\w+\s+(период|доступ|верси|аренд)\w*|\bтестов\w+\s+(доступ|период)\w*|\bпромокод\w*"
                   r"|\bбесплатн\w*\s+(доступ|час|период|кредит|тест|попробова|погонять|дать|дадите|тариф|план"
                   r"|вариант|минут)\w*|\bбесплатно\b|\b(студенческ|учебн|образовательн)\w*\s+(тариф|план|скидк|цен)\w*"
                   r"|\bгрант\w*|\b(кредиты|скидк\w*)\s+(для\s+)?(стартап|студент)\w*")
# a service level promised: uptime, an SLA, credits for downtime (no rule or entry states one)
SLA = re.compile(r"(?i)\bsla\b|\buptime\b|\bап-?тайм\w*|\bгарант\w*\s+(\w+\s+)?(доступност|аптайм|работоспособност)\w*"
                 r"|\b(availability|uptime)\s+guarantee|\bguarantee\w*\s+(\w+\s+)?(uptime|availability)\b"
                 r"|\b99[.,]9+\s*%")
# where the GPUs physically are: a country, a region, a data centre («в какой стране ваши серверы?», "are your gpus in
# europe or us?"); a datacenter GPU is a kind of GPU, not a place
LOCATION = re.compile(
    r"(?i)\bв\s+какой\s+стран\w*|\bв\s+каком\s+(регионе|городе|дата-?центре|дц)\b|\bгде\s+(физически\s+)?(находятся|стоят"
    r"|расположен\w*)\s+(ваши\s+|у\s+вас\s+)?(gpu|гпу|сервер|карт|видеокарт|мощност|машин|желез|дата-?центр|дц)"
    r"|\bдата-?центр\w*\s+(у\s+вас|ваш)|\bваш\w*\s+(дата-?центр|дц)\w*|\bв\s+(европе|сша|россии"
    r"|азии)\s+или\b|\b(which|what)\s+(region|country|datacenter|data\s+center|location)s?\b|\bwhere\s+(are|is)\s+(your|the)"
    r"\s+(gpus?|servers?|data\s*cent(er|re)s?|machines?|hardware|cluster)\b|\bin\s+(europe|the\s+us|the\s+eu|asia|the\s+usa)"
    r"\s+or\b|\b(eu|us)\s+or\s+(eu|us)\b|\bgdpr\b|\bdata\s+residency\b")
# our prices or bill named: «цены с налогом?», "do your prices include tax?"
OUR_PRICES = re.compile(r"(?i)\b(your|ваш\w*|вы|вас)\b|\bprices?\b|\bцен[аыуе]?\b|\bсч[её]т\w*|\binvoice\w*|включ\w*"
                        r"|\binclud\w*")
# the currency prices are in: «можно в рублях?», "do you take euros?", «почему цена в долларах?»
CURRENCY = re.compile(
    r"(?i)(\bв\s+(рубл|евро|доллар|тенге|юан|гривн|валют)\w*|\bрубл\w*|\bруб\.?(?!\w)|₽|€|£|\bевро\b|\bвалют\w*"
    r"|\bcurrenc\w*|\bin\s+(rubles|roubles|euros?|eur|rub|gbp|pounds|yuan|rupees|inr|cny|dollars|usd)\b"
    r"|\beuros?\b|\brub(les)?\b|\brouble\w*|\bexchange\s+rate|\bкурс\w*\s+(валют|доллар|рубл|евро))")
QUOTED = re.compile(r"'[^']{2,}'|\"[^\"]{2,}\"|“[^”]{2,}”")
# said to the provider (you, your, у вас, сдаёте, offer) or asking which GPUs there are: the price list's
# questions («какие карточки сдаёте?», "list of gpus you have"); "can kubernetes manage gpus?" or «как понять,
# что видеокарта простаивает?» sound like them to the router but ask about a thing, not about us
ASKS_US = re.compile(
    r"(?i)(\b(you|your|yours|y'?all|u|ya)\b|\b(вы|вас|вам|ваш\w*)\b|\bсда([её]|е)т\w*|\bсдаются\b|\bпредлага\w*"
    r"|\boffer\w*|\bin\s+stock\b|в\s+наличии|\b(which|what)\s+(\w+\s+)?(gpus?|cards?|graphics\s+cards?)\b"
    r"|\bкаки[еx]\s+(\w+\s+)?(видеокарт\w*|карт\w*|карточ\w*|gpu|гпу|железк\w*)|\blist\s+of\b|\bсписок\b)")
# said to the bot itself: "you", «ты», "this bot", «бот,» called by name, help and commands asked for; a sentence
# about bots in general («голосовой бот перебивает меня», "how do they teach models…") is not
ADDRESSED = re.compile(
    r"(?i)(\b(ты|тебя|тебе|тобой|тво[йиеё]\w*|умеешь|можешь|знаешь)\b|\b(this|the)\s+(bot|assistant|chat)\b"
    r"|\b(этот|этого|этим|этому)\s+(бот|ассистент|чат)\w*|^\W*(бот|bot)\b|\b(help|помощь|помоги\w*|menu|меню"
    r"|start|начать|here|тут|здесь)\b|\b(bot|бот)\s+(or|или)\b|\b(or|или)\s+(a\s+)?(bot|бот)\b|real\s+person"
    r"|живой\s+человек|talking\s+to\b|разговариваю\s+с)")
# the name of a thing asked ("what's that called?", «как это называется?»): a concept, whatever else is said
NAMING = re.compile(
    r"(?i)(\bwhat'?s\s+(that|this|it|the)(\s+\w+){0,3}\s+called\b|\bwhat\s+(is|are)\s+(that|this|it|they)\s+called\b"
    r"|\bwhat\s+do\s+(you|u|people|they|we)\s+call\b|\bis\s+there\s+a\s+(name|term|word)\s+for\b"
    r"|\bwhat'?s\s+the\s+(name|term)\s+for\b|\bhas\s+a\s+name\b"
    r"|\bhow\s+(is|are)\s+(it|this|that|they|these|those)(\s+\w+){0,2}\s+called\b|\bwhat'?s\s+the\s+name\s+of\b"
    r"|\bwhat\s+(is|are)\s+(that|this|these|those)(\s+\w+){1,3}\s+called\b"
    # «как эта штука называется», «как такой подход зовётся»: a thing pointed at, then its name asked
    r"|\bкак\s+((это|оно|она|они|эта|этот|эти|такая|такой|такое|такие|вот)\s+)?(\w+\s+){0,2}?(называ\w+|зов[её]тся"
    r"|назвать)\b|\bесть\s+(ли\s+)?(название|термин)\b)")
# the fit asked the other way round: which model a GPU runs («какую самую большую ламу потянет 4090?», "what's the
# biggest model i can run on an l40s?", «какие модели влезут в 48 гб?»)
LARGEST_MODEL = re.compile(
    r"(?i)(\b(biggest|largest|best|which|what)\s+(\w+\s+){0,2}(models?|llms?|llama|qwen|mistral|gemma|deepseek)\b(?!\s+of\b)"
    r"|\bhow\s+big\s+(of\s+)?(an?\s+)?(model|llm)\b|\bwhat\s+(can|could)\s+(i|we|you)\s+(run|fit|load|host|serve)\b"
    r"|\b(как(ую|ие|ой|ая|ое)|сам(ую|ая|ые|ое|ой)\s+(больш|крупн|мощн)\w*)\s+(\w+\s+){0,3}"
    r"(модел\w*|лам\w*|ллам\w*|llm|ллм\w*|нейронк\w*|нейросет\w*|кв[еэ]н\w*|qwen|llama)"
    r"|\bчто\s+(можно\s+)?(запустить|поднять|крутить|гонять)\b|\bмодел\w*\s+какого\s+размера\b)")
# a rental asked for, not a question about it: "can you book me 2 h100", «плиз арендуй мне 4 a100», "i need 2 h100"
RENT_REQUEST = re.compile(
    r"(?i)\b(rent|book|reserve|арендуй\w*|арендовать|арендую|арендуем|забронир\w*|бронир\w*|сними|снять|need|want"
    r"|wanna|хочу|хотим|нужн\w+|надо|i'?d\s+like|дайте|дай|give\s+me|get\s+me|gimme|выдай\w*|выдели\w*|organi[sz]e"
    r"|(can|could)\s+(i|we)\s+get"
    r"|set\s+me\s+up\s+with|spin\s+up|подними|запусти\s+мне)\b")
# the fastest GPU asked with none named ("whats the fastest gpu you have", «самая мощная карта у вас?»)
FASTEST = re.compile(
    r"(?i)\b(fastest|quickest|most\s+powerful|strongest|beefiest|top|best|highest[-\s]end)\s+(\w+\s+)?(gpus?|cards?|graphics\s+cards?)\b"
    r"|\bсам(ая|ую|ые|ой|ый|ое)\s+(быстр|мощн|топов|производительн)\w*\s+(\w+\s+)?(карт|видеокарт|gpu|гпу|видюх|железк)\w*")
# «есть ли b200?», "got any h200s?": whether a GPU is to be had
HAVE_YOU = re.compile(r"(?i)(^|[\s,])(а\s+)?есть\s+ли\b|\bgot\s+any\b|\bany\s+\S+\s+(available|free|left)\b"
                      # «a6000 есть?», «есть h200?», «у вас есть v100?»
                      r"|\bесть\s*[?!.]*\s*$|^\W*(а\s+)?(у\s+вас\s+)?есть\s+\S+(\s+\S+)?\s*[?!.]*$"
                      r"|\bу\s+вас\s+(\w+\s+)?есть\b")
# "the paid period" names a time, not a payment: «что будет, когда оплаченный период закончится?»
# what is paid for, or when, said in passing: not a question about paying («после оплаты», "after I pay")
PAID_PERIOD = re.compile(r"(?i)(оплаченн\w*\s+(период|срок)\w*|paid\s+(period|term|time)|после\s+оплаты"
                         r"|after\s+(i\s+|we\s+)?(pay|paying|payment|i've\s+paid))")
HOW = re.compile(r"(?i)(\bкак\b|\bhow\b|\bгде\b|\bwhere\b|через|\bvia\b|\binstead\b|можно\s+ли|\bcan\s+i\b)")
# a concept asked about: how it works, why, what it gives, what differs («учу на 4090, вылетает OOM — как это
# работает?»): a GPU named in passing does not make it a question about that GPU
EXPLAIN = re.compile(r"(?i)(\bпочему\b|\bзачем\b|\bкак\s+(это|оно|они)\s+работа|\bкак\s+(её|ее|его|их|это)\s+\w+|"
                     r"что\s+(это\s+)?(вообще\s+)?да(ст|ёт|ет)|чем\s+(они\s+)?отлича|в\s+ч[её]м\s+разниц|"
                     r"как(ой|ая|ое)\s+(\w+\s+)?(параметр|компонент|механизм|настройк)\w*|\bwhy\b|\bhow\s+does\b|\bhow\s+do\s+(i|we)\b|"
                     r"what'?s?\s+(is\s+)?the\s+(actual\s+)?difference|what\s+are\s+the\s+options|\bworth\s+it\b|"
                     r"\bкак\s+так\b|\bhow\s+come\b)")
# the thing that does something asked for, not a fit: "what does that in stable diffusion?", «что за это отвечает?»,
# "which technique…", «каким методом…»
TECHNIQUE = re.compile(r"(?i)(\bwhat\s+(does|do|is\s+doing)\s+(that|this|it)\b|\bwhich\s+(technique|method|tool|trick"
                       r"|approach|component|setting|feature)s?\b|что\s+(за\s+)?(это|этим)\s+отвеча\w*"
                       r"|как(ой|им|ая|ую)\s+(метод|при[её]м|техник|подход|инструмент|фич)\w*"
                       r"|что\s+(это\s+)?за\s+(трюк|при[её]м|метод|техник|подход|фич|хитрост|лайфхак)\w*"
                       r"|\bкак\s+(мне\s+)?(сделать|добиться|заставить)\w*,?\s+(чтобы|чтоб)\b"
                       r"|\bhow\s+(do\s+i|can\s+i|to|do\s+you)\s+(make|get|force)\s+(it|sd|the\s+model|\w+)\s+(to\s+)?(always|keep"
                       r"|draw|generate|produce|stop|remember)\b"
                       r"|\b(есть|бывает)\s+(\w+\s+)?(трюк|при[её]м|способ|вариант|техник)\w*\s*,?\s+(где|когда|при\s+котор)\w*"
                       r"|\b(there'?s|there\s+is|heard\s+of)\s+(a|some)\s+(trick|technique|method|way|mode)\s+(where|that|when)\b"
                       # which weights a training updates: «можно обучать не все веса, а только часть?», "train only a
                       # small part of the params"
                       r"|(обуча|тренир|дообуча|учить|train|updat|fine-?tun)\w*\s+(\w+\s+){0,3}(не\s+все|только|лишь|not\s+all|only|just)"
                       r"[\w\s,-]{0,30}?(част|доля|слои|слоё|слое|адаптер|маленьк|небольш|part|fraction|subset|layers|adapter|small|tiny"
                       r"|few)\w*)")
# what a thing costs, causes, limits or is for, asked of a concept, not of the hardware: «что её съедает?» (the
# memory), «во что упирается генерация?», «что я за это потеряю?», "what's eating the vram?", "what is that component
# responsible for?", «оно сильно тормозить будет?»
CONCEPT_ASKED = re.compile(
    r"(?i)\bчто\s+(\w+\s+){0,3}(съеда|сжира|жр[её]т|отжира|забива)\w*"
    r"|\bкуда\s+(\w+\s+)?(уходит|девается|утека\w*)\s+(\w+\s+)?(память|видеопамять|vram)"
    r"|\bwhat'?s\s+(eating|hogging|using\s+up|taking\s+up)\b|\bwhat\s+(eats|is\s+eating|hogs|uses\s+up|takes\s+up)\b"
    r"|\bwhere\s+(does|is)\s+(all\s+)?(the\s+|my\s+)?(memory|vram)\s+go"
    r"|\bчто\s+(я\s+|мы\s+)?(за\s+это\s+)?(потеря\w*|теря\w*|проигра\w*)\b|\bчем\s+(придется\s+|придётся\s+)?(пожертвова|заплати)\w*"
    r"|\bwhat\s+(do|would|will|did)\s+(i|we|you)\s+(lose|give\s+up|sacrifice)\b|\btrade-?offs?\b"
    r"|\bво\s+что\s+(\w+\s+){0,4}упира\w*|\bчто\s+(\w+\s+){0,2}ограничива\w*\s+(\w+\s+)?(скорост|генерац)"
    r"|\bwhat('?s|\s+is)\s+(actually\s+|really\s+)?(the\s+)?bottleneck|\bwhat\s+(actually\s+|really\s+)?(limits|caps)\b"
    r"|\bза\s+что\s+(\w+\s+){0,2}отвеча\w*|\b(что|кто)\s+(\w+\s+)?отвечает\s+за\b|\bresponsible\s+for\b"
    r"|\b(оно|он|она|это)\s+(сильно\s+|очень\s+|намного\s+)?(тормоз|замедл)\w*"
    r"|\b(will|would|does)\s+(it|that|this)\s+(\w+\s+)?(slow\s+(it\s+|things\s+|me\s+|us\s+)?down|hurt\s+(speed|performance))"
    r"|\bчем\s+(она|он|оно|они)\s+полез\w*|\bwhat\s+(is|are)\s+(it|they)\s+(good|useful)\s+for\b"
    # a cause asked: «в чём может быть дело?», «из-за чего это?», "what could be causing it?"
    r"|\bв\s+ч[её]м\s+(\w+\s+){0,2}(дело|причин\w*|проблем\w*)|\bиз-за\s+чего\b|\bчто\s+(\w+\s+)?(не\s+так|за\s+фигня)"
    r"|\bwhat\s+(could|might|would)\s+(be\s+)?(caus\w+|the\s+(cause|reason|problem))|\bwhat'?s\s+causing\b"
    r"|\bwhat\s+causes\s+(this|that|it)\b"
    # what a figure depends on: «от чего зависит скорость генерации?», "what does the speed depend on?"
    r"|\bот\s+чего\s+(\w+\s+){0,2}завис\w*|\bwhat\s+(does|do)\s+(\w+\s+){1,4}depend\s+on\b|\bwhat\s+determines\b")
# the sentences of a message; the last one with a question mark (else the last one) is what it asks
_SENTENCE_BREAK = re.compile(r"(?<=[.!?…])\s+|\s+[—–]\s+|\s+-\s+|;\s+")


def asked_clauses(text: str) -> list[str]:
    """The sentences a message asks, the last first («учу 7b на 4090, вылетает по памяти. слышал, активации можно не
    хранить, как это называется?» asks a name): those with a question mark, else its last."""
    parts = [part for part in _SENTENCE_BREAK.split(text.strip()) if part and part.strip()]
    if not parts:
        return [text]
    asked = [part for part in parts if "?" in part]
    return list(reversed(asked)) if asked else [parts[-1]]


# attempts to re-instruct the bot: a security policy, not a route to learn. A system prompt is asked for when a verb
# or "your" asks it of us («покажи свой системный промпт»); one that is the subject of a question («у всех запросов
# один системный промпт — можно не пересчитывать?», prompt caching) is a concept
INJECTION = re.compile(
    r"(?i)((ignore|disregard|forget)\s+(all\s+|any\s+|the\s+|your\s+)*(previous|prior|above|earlier)?\s*"
    r"(instructions|rules|prompts?)|(forget|ignore)\s+(all\s+|any\s+)*(the\s+)?system\s+prompt"
    r"|\b(print|show|reveal|repeat|tell|give|output|display|dump|leak|share|what'?s|what\s+is|your|ur)\W+(\w+\W+){0,3}"
    r"system\s+prompt|(забудь|игнорируй|проигнорируй)\s+(вс[её]\s+|все\s+|свои\s+)*"
    r"(предыдущ\w*\s+)?(инструкци|правил|указани)\w*"
    r"|(покажи|выведи|выдай|скажи|напиши|дай|повтори|раскрой|како[йв]|тво[йиею]\w*|сво[йиею]\w*|ваш\w*|забудь"
    r"|игнорируй)\W+(\w+\W+){0,3}системн\w*\s+(промпт|подсказк|инструкци)\w*"
    r"|\bjailbreak\b|\bDAN\s+mode\b|developer\s+mode|pretend\s+(that\s+)?you\s+(have\s+no|are\s+not|aren'?t)"
    r"|\byou\s+have\s+no\s+(restrictions|rules|filters)\b|\b(admin|root)\s+(password|credentials)"
    r"|(пароль|доступ)\s+(от\s+)?(админ\w*|сервер\w*|root)|представь,?\s+что\s+(у\s+тебя\s+)?нет\s+(ограничений|правил)"
    r"|без\s+цензуры\b)")
# an insult, not a complaint about an answer («тупая железка», "piece of garbage"); «бесполезный», "useless",
# "slow" are complaints and get the small-talk apology
INSULT = re.compile(
    r"(?i)(\bтуп(ой|ая|ое|ые|ица)\b|\bидиот\w*|\bдебил\w*|\bкретин\w*|\bмусор\w*|\bхрен[ьи]\b|\bдерьм\w*|\bговн\w*|"
    r"\bмошенник\w*|\bразвод(ил\w*|илово)\b|\bжелез(ка|яка|яку|ку)\b|\bstupid\b|\bdumb\b|\bidiot\w*|\bmoron\w*|"
    r"\btrash\b|\bgarbage\b|\bscam(mers?)?\b|\bfraud\w*|piece\s+of\s+(shit|crap|junk)|\bcrap\b)")
INSULT_TARGET = re.compile(r"(?i)(\bты\b|\bвы\b|\bтеб[яе]\b|\bвас\b|\bваш\w*|\bбот\w*|\bжелез(ка|яка)|"
                           r"\byou\b|\byou'?re\b|\byour\b|\bu\b|\bbot\b|\bassistant\b)")
AVAILABILITY = re.compile(
    r"(?i)(арендова(?!нн)\w*|арендуе\w*|свободн\w*|есть\s+(ли\s+)?у\s+вас|у\s+вас\s+(есть|бывают|имеются)|сда[её]т\w*|в\s+наличии"
    r"|в\s+аренд\w*|\brentable\b|\b(do|can)\s+(you|u)(\s+guys|\s+folks|\s+all)?\s+(have|offer|rent|provide)\b"
    r"|\bgot\s+any\b|\bin\s+stock\b|\bavailable\b|доступн\w*)")



# a program's own version ("vllm 0.4.2", «pytorch 2.3», "ubuntu 24.04", "v0.6"), not a figure with its unit
# ("1.5x", «2.5 дня», "3.35 TB/s")
SOFTWARE_VERSION = re.compile(
    r"(?i)(?P<name>\b[a-zа-я][\w.+-]*?)\s?(?P<version>v?\d+\.\d+(?:\.\d+)*)(?![\d.,])"
    r"(?!\s*(x\b|×|%|gb|gib|гб|гиб|tb|тб|mb|мб|b\b|млрд|bn\b|ms\b|мс|s\b|с\b|sec|сек|h\b|hours?|час|ч\b|дн|day|"
    r"week|недел|month|месяц|раз|times|tflops|tok|бит|bit|usd|\$|€|руб|₽|k\b|к\b))")
# what breaks or which build to take: an error, a crash, a fix, "which version"
TROUBLE = re.compile(
    r"(?i)(crash\w*|\berrors?\b|\bbugs?\b|\bбаг\w*|ошибк\w*|пада\w*|упал\w*|вылета\w*|segfault|exception|traceback"
    r"|\bfails?\b|failing|broken|сломал\w*|не\s+работает|(doesn'?t|does\s+not|won'?t)\s+work|not\s+working"
    r"|\bfix\w*|пофикс\w*|почин\w*|исправ\w*|regression|регресс\w*|black\s+screen|ч[её]рн\w+\s+экран"
    r"|(which|what)\s+(exact\s+)?version|как(ую|ой|ая)\s+(точно\s+)?(верси\w+|номер)|номер\s+версии)")
# out of memory is the fit's question, whatever version runs it
_MEMORY_TROUBLE = re.compile(r"(?i)(out\s+of\s+memory|\boom\w*|\bоом\b|не\s+влез\w*|не\s+помещ\w*|памят\w*|\bvram\b)")
# when a product comes out: release dates and future prices are in no catalog and no glossary
RELEASE = re.compile(
    r"(?i)(\bwhen\s+(is|are|will|does|do|was|were|did)\b[^?!]{0,40}\b(releas\w*|com(e|ing)\s+out|announc\w*|launch\w*)"
    r"|\brelease\s+date|\blaunch\s+date|когда\s+(выйд\w+|выходит|выш(ел|ла|ли)|выпуст\w+|релиз\w*|анонс\w*)"
    r"|дат\w+\s+(выхода|релиза|анонса))")


def version_trouble(text: str) -> str | None:
    """The program and version a message troubleshoots ("vllm 0.4.2 crashes…", «какую версию драйвера на ubuntu
    24.04…»): a version-specific fault or build is in no glossary. ``None`` for anything else."""
    if not TROUBLE.search(text) or _MEMORY_TROUBLE.search(text):
        return None
    found = SOFTWARE_VERSION.search(text)
    return f"{found.group('name')} {found.group('version')}" if found is not None else None
