"""tools/precedent_redaction.py: replaced characters by source, case kind and kind of text, on two small decisions
and the recognizers alone (no model)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))  # the tools import their shared helpers as scripts do
TOOL = TOOLS / "precedent_redaction.py"
_SPEC = importlib.util.spec_from_file_location("precedent_redaction", TOOL)
assert _SPEC is not None and _SPEC.loader is not None
tool = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(tool)
CIVIL = "【원 고】 원고\n원고는 피고에게 010-1234-5678로 전화하였다(민법 제750조).\n판사 김철수"
CRIMINAL = "【피 고 인】 피고인\n피고인은 서울중앙지방법원에서 형법 제62조 제1항에 따라 집행유예를 선고받았다."


def test_breakdown_by_source_kind_and_category(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "precedents.jsonl"
    records = [{"id": "2020가단1", "kind": "civil", "text": CIVIL},
               {"id": "2020고단2", "kind": "criminal", "text": CRIMINAL}]  # fmt: skip
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "figures.json"
    assert tool.main(["--data", str(data), "--json", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    non_space = sum(not c.isspace() for c in CIVIL + CRIMINAL)
    assert figures["total"] == {"characters": len(CIVIL + CRIMINAL), "non_whitespace": non_space, "replaced": 13}
    assert figures["by_source"] == {"phone_number": 13}
    assert figures["by_kind"]["civil"] == {"non_whitespace": sum(not c.isspace() for c in CIVIL), "documents": 1,
                                           "replaced": 13}  # fmt: skip
    assert "replaced" not in figures["by_kind"]["criminal"]
    assert figures["by_category"]["other"] == {"phone_number": 13}
    assert figures["top_texts"] == [{"text": "010-1234-5678", "source": "phone_number", "count": 1}]
    assert "| phone_number | 13 |" in capsys.readouterr().out


def test_a_bad_policy_or_a_cache_without_a_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "precedents.jsonl"
    data.write_text(json.dumps({"id": "1", "kind": "civil", "text": CIVIL}, ensure_ascii=False) + "\n", encoding="utf-8")
    for args, message in ((["--policy", '{"propagate_share": 2}'], "propagate_share must lie in [0, 1]"),
                          (["--policy", '{"no_such_option": 1}'], "no_such_option"),
                          (["--policy", "[1]"], "--policy must be a JSON object"),
                          (["--cache", str(tmp_path / "c.json")], "--cache keeps a model's outputs")):  # fmt: skip
        assert tool.main(["--data", str(data), *args]) == 2
        assert message in capsys.readouterr().err
    out = tmp_path / "figures.json"
    assert tool.main(["--data", str(data), "--policy", '{"keep_officials": []}', "--json", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["by_source"] == {"phone_number": 13, "officials": 3}  # the judge's name replaced too
    assert figures["meta"]["policy"] == {"keep_officials": []}


def test_categories_cover_statutes_courts_procedure_and_published_names() -> None:
    text = (
        "피고인은 형법 제62조 제1항, 제62조의2에 따라 대구가정법원 안동지원에서 판결을 받았다(갑 제3호증).\n"
        "판사 이상균(재판장) 김유경"
    )
    found = tool.categories(text)

    def of(name: str) -> str:
        return "".join(c for c, k in zip(text, found) if tool.CATEGORIES[k] == name)

    assert of("statute reference") == "형법 제62조 제1항, 제62조의2"
    assert of("court name") == "대구가정법원 안동지원"
    assert of("procedural term") == "피고인판사재판장"
    assert of("published official") == " 이상균() 김유경"
    assert "판결을 받았다(갑 제3호증)" in of("other")


def test_the_courts_marks_are_a_category_of_their_own() -> None:
    """Replacing a court's mark (``○○○``, the number of ``피고인 1``) hides nothing: it is counted apart."""
    text = "피고인 1은 피해자 ○○○에게 형법 제62조를 어겼다."
    found = tool.categories(text)
    mark = tool.CATEGORIES.index("court mark")
    assert [found[text.index(part)] for part in ("1", "○○○", "제62조", "어겼다")] == [
        mark, mark, tool.CATEGORIES.index("statute reference"), tool.CATEGORIES.index("other")]  # fmt: skip
