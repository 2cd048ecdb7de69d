"""The HTML renderer and the splitter: every chunk valid Telegram HTML, under 4096, nothing lost."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.output.rendering import (
    _split_atoms,
    split_html,
    split_plain,
    strip_tags,
    truncate_preview,
    utf16_len,
)
from dev.telegram_stub import parse_html, visible_length
from infra.markup import escape

WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=60)
TAGS = ("b", "i", "u", "s", "code", "tg-spoiler", "blockquote")


@st.composite
def telegram_html(draw: st.DrawFn) -> str:
    """Random nested Telegram HTML from escaped random text, tags, links and code blocks."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["text", "tag", "pre", "link", "newline", "long"]))
        text = escape(draw(WORDS))
        if kind == "text":
            parts.append(text)
        elif kind == "tag":
            tag = draw(st.sampled_from(TAGS))
            inner = escape(draw(WORDS))
            nested = draw(st.sampled_from(["", "b", "i"]))
            if nested and tag not in ("code",):
                inner = f"<{nested}>{inner}</{nested}>"
            parts.append(f"<{tag}>{inner}</{tag}>")
        elif kind == "pre":
            parts.append(f'<pre><code class="language-python">{text}\n{text}</code></pre>')
        elif kind == "link":
            parts.append(f'<a href="https://example.com/?q=1&amp;b=2">{text}</a>')
        elif kind == "newline":
            parts.append("\n" * draw(st.integers(1, 3)))
        else:
            unit = draw(st.sampled_from(["a", "я", "😀", "&amp;", "word ", "line\n"]))
            parts.append(unit * draw(st.integers(100, 3000)))
    return "".join(parts)


def _visible_without_spaces(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.long
@settings(max_examples=150, deadline=None)
@given(telegram_html(), st.sampled_from([64, 300, 4096]))
def test_split_chunks_are_valid_html_under_the_limit(html_text: str, limit: int) -> None:
    chunks = split_html(html_text, limit)
    for chunk in chunks:
        plain = parse_html(chunk)  # raises like Telegram's "can't parse entities"
        assert 0 < visible_length(chunk, "HTML") <= limit
        assert plain.strip()
    # nothing lost or duplicated, apart from whitespace at the cuts
    joined = "".join(parse_html(chunk) for chunk in chunks)
    assert _visible_without_spaces(joined) == _visible_without_spaces(parse_html(html_text))


@settings(max_examples=150, deadline=None)
@given(telegram_html())
def test_short_html_takes_the_fast_path_with_the_same_result(html_text: str) -> None:
    """A text under the limit is returned as it is, exactly as the atom-by-atom splitter would."""
    assume(utf16_len(html_text) <= 4096)
    assert [parse_html(c) for c in split_html(html_text)] == [parse_html(c) for c in _split_atoms(html_text, 4096)]


def test_nine_thousand_characters_split_at_paragraphs_and_keep_code_blocks() -> None:
    paragraph = ("Тензорный параллелизм делит матрицы между GPU. " * 20).strip()
    code = "<pre><code>" + escape("for i in range(10):\n    print(i < 5 & True)\n") * 60 + "</code></pre>"
    html_text = "\n\n".join([paragraph] * 6 + [code] + [paragraph] * 3)
    assert visible_length(html_text, "HTML") > 9000
    chunks = split_html(html_text)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert visible_length(chunk, "HTML") <= 4096
        parse_html(chunk)
    # a code block cut in two is closed and reopened as a code block
    with_code = [c for c in chunks if "<pre><code>" in c]
    assert all(c.count("<pre><code>") == c.count("</code></pre>") for c in with_code)
    assert not any(chunk.startswith(" ") for chunk in chunks)


def test_utf16_counting_for_emoji() -> None:
    text = "😀" * 3000  # 6000 UTF-16 units
    chunks = split_html(text)
    assert [utf16_len(c) for c in chunks] == [4096, 1904]
    assert "".join(chunks) == text


def test_plain_helpers() -> None:
    assert strip_tags("<b>a &lt; b</b>") == "a < b"
    assert split_plain("x <y> " * 2000, 500)[0].startswith("x <y>")
    assert all(utf16_len(part) <= 500 for part in split_plain("x <y> " * 2000, 500))
    preview = truncate_preview("й" * 10_000)
    assert utf16_len(preview) <= 4000 and preview.startswith("…")
