"""A text written decomposed (NFD) is read composed, every composed character maps back to the characters it was
made of, and what replaces a stretch is written in the original's own form there."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from thunder.language.views import TextView, composed

# Hangul syllables and conjoining jamo, Latin letters with combining marks, an Indic vowel sign that composes
# (U+0BBE after U+0BC6), Å written as the Angstrom sign (a singleton), digits and spaces
PIECES = ["가", "한", "글", "\u1100", "\u1112", "\u1161", "\u1175", "\u11a8", "\u11ab", "e", "a", "\u0301", "\u0323",
          "\u0bc6", "\u0bbe", "\u212b", "1", " ", "\n"]  # fmt: skip
TEXTS = st.lists(st.sampled_from(PIECES + [unicodedata.normalize("NFD", s) for s in ("홍길동", "은", "김철수는")]),
                 max_size=30).map("".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_the_composed_view_is_nfc_and_maps_back_to_what_made_each_character(text: str) -> None:
    view = composed(text)
    assert view.text == unicodedata.normalize("NFC", text)
    for view_start, original_start, view_length, original_length in view.changes:
        made_of = text[original_start : original_start + original_length]
        assert unicodedata.normalize("NFC", made_of) == view.text[view_start : view_start + view_length]
    assert view.original_span(0, len(view.text)) == (0, len(text))
    assert view.written(0, len(view.text), view.text) == text  # nothing changed: the original as it was
    for start in range(len(view.text)):
        a, b = view.original_span(start, start + 1)
        assert view.view_span(a, b)[0] <= start < view.view_span(a, b)[1]


def test_a_replacement_is_written_in_the_form_of_the_text_it_replaces() -> None:
    written = "피고인 " + unicodedata.normalize("NFD", "홍길동은") + " 김철수는"
    view = composed(written)
    assert view.text == "피고인 홍길동은 김철수는" and view.changes
    name = view.text.index("홍길동")
    assert view.original_span(name, name + 3) == (4, 4 + len(unicodedata.normalize("NFD", "홍길동")))
    assert view.written(name, name + 3, "A") == "A"
    particle = name + 3
    assert view.written(particle, particle + 1, "는") == unicodedata.normalize("NFD", "는")  # decomposed as written
    other = view.text.index("김철수")
    assert view.written(other, other + 4, "L은") == "L은"  # composed as written
    assert composed("이미 NFC") == TextView("이미 NFC", "이미 NFC")  # nothing to compose: no changes
