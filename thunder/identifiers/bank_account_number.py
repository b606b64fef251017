"""계좌번호: digit groups in the layout each bank publishes (``110-123-456789``), or bare digits after 계좌/통장."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer, fill_digits, followed_by_amount
from thunder.identifiers.context import MentionContext

NAME = "account_number"


class BankAccountNumber(PatternRecognizer):
    """3-4 digit groups joined by hyphens with 10-14 digits (``110-123-456789``: 0.55, 0.85 after a context
    word); right after a context word such as 계좌/통장/은행 also 10-14 bare digits or groups joined by spaces
    (``110 123 456789``: 0.75); never an amount."""

    name = "bank_account_number"
    identifier = NAME
    pattern = re.compile(
        r"(?<![\d\-])(?P<id>[\d*]{2,6}-[\d*]{2,6}-[\d*]{2,7}(?:-[\d*]{1,4})?|\d{10,14}"
        r"|(?<!\d )\d{2,6} \d{2,6} \d{2,7}(?: \d{1,4})?(?! ?\d))(?![\d\-])"
    )
    context = ("계좌", "통장", "은행", "뱅크", "예금", "입금", "송금", "이체", "농협", "신협", "금고", "우체국")

    def score(self, match: re.Match, text: str) -> float:
        value = match.group("id")
        if followed_by_amount(text, match) or not 10 <= len(re.sub(r"[^\d*]", "", value)) <= 14:
            return 0
        has_context = self.near_context(text, match)
        if "-" not in value:
            return 0.75 if has_context else 0
        return 0.85 if has_context else 0.55


# bank -> (words that name it in the text, account number patterns in the bank's published layout)
BANK_ACCOUNT_FORMATS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "KB국민은행": (("국민", "KB"), ("######-##-######", "###-##-####-###")),
    "신한은행": (("신한",), ("110-###-######", "1##-###-######", "###-##-######")),
    "우리은행": (("우리",), ("1002-###-######",)),
    "하나은행": (("하나", "KEB"), ("###-######-#####",)),
    "NH농협은행": (
        ("농협", "NH", "단위농협", "지역농협"),
        ("3##-####-####-##", "302-####-####-##", "351-####-####-##"),
    ),
    "IBK기업은행": (("기업", "IBK"), ("###-######-##-###",)),
    "SC제일은행": (("SC", "제일"), ("###-##-######",)),
    "한국씨티은행": (("씨티", "시티"), ("###-######-###",)),
    "카카오뱅크": (("카카오",), ("3333-##-#######", "3355-##-#######")),
    "케이뱅크": (("케이뱅크", "K뱅크"), ("100-###-######",)),
    "토스뱅크": (("토스",), ("1000-####-####",)),
    "우체국": (("우체국",), ("######-##-######",)),
    "새마을금고": (("새마을",), ("9002-####-####-#", "9003-####-####-#")),
    "신협": (("신협", "신용협동조합"), ("13#-###-######",)),
    "수협은행": (("수협",), ("1##-##-######",)),
    "대구은행": (("대구", "DGB", "iM"), ("5##-##-######-#",)),
    "부산은행": (("부산", "BNK"), ("1##-####-####-##",)),
    "경남은행": (("경남",), ("2##-##-#######",)),
    "광주은행": (("광주",), ("1##-###-######",)),
    "전북은행": (("전북",), ("5##-##-#######",)),
    "KDB산업은행": (("산업",), ("###-####-####-###",)),
}
_BANK_WORDS = sorted(
    ((word, bank) for bank, (words, _) in BANK_ACCOUNT_FORMATS.items() for word in words), key=lambda wb: -len(wb[0])
)


def bank_in_text(text: str) -> str | None:
    """The bank named last in ``text`` (one of :data:`BANK_ACCOUNT_FORMATS`), or ``None``."""
    best: tuple[int, str] | None = None
    for word, bank in _BANK_WORDS:
        position = text.rfind(word)
        if position >= 0 and (best is None or position > best[0]):
            best = (position, bank)
    return best[1] if best else None


def generate(rng: random.Random, context: MentionContext) -> str:
    """An account number in the layout of the bank named just before it (else of a random bank)."""
    bank = None
    for left in context.lefts:
        bank = bank_in_text(left[-30:]) or bank
        if bank:
            break
    _, patterns = BANK_ACCOUNT_FORMATS[bank or rng.choice(tuple(BANK_ACCOUNT_FORMATS))]
    return fill_digits(rng, rng.choice(patterns))


IDENTIFIER = Identifier(NAME, BankAccountNumber, generate)
