"""No word list grows from an evaluation set (issue 66): every word of the packaged lexicons (genre words, legal
terms, general nouns, protected words) is found in no more of the evaluation decisions (legal-ko's held-out share and
``benchmarks/precedents``) than the training share's decisions of the same kinds lead one to expect.

A word counts in a decision where a whitespace-separated word starts with it (``조합원`` in ``조합원들은``). The
expected count of evaluation decisions holding a word is the sum over kinds of the evaluation decisions of that kind
times the share of training decisions of that kind holding it (with half a decision added, so that a word never
seen in training is not infinitely rare); a word fails where its count is at least 3 and the binomial chance of
that many or more is under 1% over the whole lexicon (Bonferroni). Counting decisions rather than occurrences keeps
one long decision's topic (``조합원`` 168 times in one) from deciding.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from thunder.deid.policy import PROTECTED_WORDS
from thunder.documents.corpus import held_out, plan, records
from thunder.language.genre import load_genre_words
from thunder.language.legal import TERMS_FILE, read_lexicon
from thunder.synthesis.vocabulary import load_general_nouns

ROOT = Path(__file__).resolve().parents[2]
LEGAL_KO = ROOT.parent / "shared" / "corpus" / "legal-ko" / "precedents.jsonl.xz"
PRECEDENTS = ROOT / "benchmarks" / "precedents" / "precedents.jsonl"
FAMILY_WISE_ERROR = 0.01


def _decisions_holding(decisions: list[tuple[str, str]], words: frozenset[str]) -> tuple[Counter, dict[str, Counter]]:
    """Decisions per kind, and per kind the decisions holding each word at the start of one of their words."""
    lengths = sorted({len(word) for word in words})
    per_kind: Counter[str] = Counter()
    holding: dict[str, Counter[str]] = {}
    for kind, text in decisions:
        per_kind[kind] += 1
        found = {piece[:n] for piece in set(text.split()) for n in lengths if n <= len(piece)} & words
        holding.setdefault(kind, Counter()).update(found)
    return per_kind, holding


def _at_least(k: int, n: int, p: float) -> float:
    """The binomial chance of ``k`` or more successes in ``n`` trials of probability ``p``."""
    log_p, log_q = math.log(p), math.log1p(-p)
    return sum(
        math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q)
        for i in range(k, n + 1)
    )


Holding = tuple[Counter, dict[str, Counter]]  # decisions per kind; per kind, the decisions holding each word


def overrepresented(words: frozenset[str], evaluation: Holding, training: Holding) -> list[tuple[str, int, float]]:
    """``(word, evaluation decisions holding it, expected)`` of the ``words`` the evaluation decisions hold more often
    than the training decisions of their kinds allow (see the module); both counted by :func:`_decisions_holding`."""
    (eval_kinds, eval_holding), (train_kinds, train_holding) = evaluation, training
    total, limit = sum(eval_kinds.values()), FAMILY_WISE_ERROR / max(len(words), 1)
    found = []
    for word in sorted(words):
        count = sum(eval_holding.get(kind, Counter())[word] for kind in eval_kinds)
        expected = sum(n * (train_holding.get(kind, Counter())[word] + 0.5) / (train_kinds[kind] + 1)
                       for kind, n in eval_kinds.items())  # fmt: skip
        if count >= 3 and count > expected and _at_least(count, total, min(expected / total, 1 - 1e-9)) < limit:
            found.append((word, count, expected))
    return found


LEXICONS = {
    "genre words": lambda: load_genre_words(True),
    "legal terms": lambda: frozenset(read_lexicon(TERMS_FILE)),
    "general nouns": lambda: frozenset(load_general_nouns()),
    "protected words": lambda: frozenset(PROTECTED_WORDS),
}


@pytest.fixture(scope="module")
def decisions() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(evaluation, training) decisions as ``(kind, text)``."""
    if not LEGAL_KO.is_file():
        pytest.skip(f"legal-ko not found at {LEGAL_KO}")
    evaluation, training = [], []
    for record in (r for span in plan([LEGAL_KO]) for r in records(span, "all")):
        if record.get("kind") != "statute":
            (evaluation if held_out(record["id"]) else training).append((record["kind"], record["text"]))
    for line in PRECEDENTS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        evaluation.append((record["kind"], record["text"]))
    return evaluation, training


@pytest.fixture(scope="module")
def holding(decisions) -> tuple[Holding, Holding]:
    """The decisions holding each word of every lexicon: (evaluation, training)."""
    words = frozenset().union(*(load() for load in LEXICONS.values()))
    return _decisions_holding(decisions[0], words), _decisions_holding(decisions[1], words)


@pytest.mark.parametrize("lexicon", LEXICONS)
def test_no_lexicon_word_is_commoner_in_the_evaluation_sets(holding, lexicon: str) -> None:
    assert overrepresented(LEXICONS[lexicon](), *holding) == []


def test_a_word_taken_from_the_evaluation_sets_is_found(decisions) -> None:
    """The check can fail: a word written into 40 evaluation decisions, and into none of training's."""
    evaluation, training = decisions
    words = frozenset({"가나다라마바사", "판결"})
    planted = [(kind, text + " 가나다라마바사") for kind, text in evaluation[:40]] + evaluation[40:]
    found = overrepresented(words, _decisions_holding(planted, words), _decisions_holding(training, words))
    assert [word for word, *_ in found] == ["가나다라마바사"]
