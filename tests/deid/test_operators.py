"""Replacement operators and placeholder letters."""

from __future__ import annotations

from itertools import islice

import pytest

from thunder.deid.operators import (
    OPERATORS,
    Entity,
    MaskOperator,
    Operator,
    PlaceholderOperator,
    SurrogateOperator,
    TagOperator,
    entity_key,
    load_operator,
)
from thunder.documents.annotation import placeholder_sequence


def entity(key: str = "홍길동", label: str = "내국인이름", placeholder: str = "A", avoid: tuple = ()) -> Entity:
    return Entity(key, placeholder, label, (key,), (("피고인 ", "은 피해자"),), frozenset({key, *avoid}))


def test_placeholder_sequence() -> None:
    letters = list(islice(placeholder_sequence(), 26 * 27 + 1))
    assert letters[:3] == ["A", "B", "C"]
    assert letters[25:29] == ["Z", "AA", "AB", "AC"]
    assert letters[51:53] == ["AZ", "BA"]
    assert letters[26 * 27 - 1 : 26 * 27 + 1] == ["ZZ", "AAA"]
    assert len(set(letters)) == len(letters)
    assert list(islice(placeholder_sequence("XY"), 7)) == ["X", "Y", "XX", "XY", "YX", "YY", "XXX"]


def test_entity_key_ignores_whitespace() -> None:
    assert entity_key("홍 길동") == entity_key("홍길동\n") == "홍길동"


def test_simple_operators() -> None:
    e = entity()
    assert PlaceholderOperator().replace(e, "홍길동") == "A"
    assert TagOperator().replace(e, "홍길동") == "[내국인이름]"
    assert TagOperator("<{label}:{placeholder}>").replace(e, "홍길동") == "<내국인이름:A>"
    assert MaskOperator().replace(e, "홍 길동") == "* **"
    assert MaskOperator("#", length=4).replace(e, "홍길동") == "####"
    with pytest.raises(ValueError):
        MaskOperator("**")


def test_surrogate_is_consistent_realistic_and_avoids_document_entities() -> None:
    operator = SurrogateOperator(seed=7)
    name = operator.replace(entity(), "홍길동")
    assert name == operator.replace(entity(), "홍 길동")  # same entity -> same surrogate
    assert name == SurrogateOperator(seed=7).replace(entity(), "홍길동")  # stable across instances/processes
    assert name != "홍길동" and 2 <= len(name) <= 4 and all("가" <= c <= "힣" for c in name)
    other = operator.replace(entity("김철수"), "김철수")
    assert other != name
    # a surrogate equal to another entity of the document is drawn again
    avoided = operator.replace(entity(avoid=(name,)), "홍길동")
    assert avoided != name and name not in avoided
    rrn = operator.replace(entity("900101-1234568", "주민등록번호"), "900101-1234568")
    assert rrn != "900101-1234568" and len(rrn) == 14 and rrn[6] == "-"
    assert operator.replace(entity("x", "없는라벨"), "x") == "[없는라벨]"  # no source: the fallback


class Reverse(Operator):
    name = "reverse"

    def replace(self, entity: Entity, mention: str) -> str:
        return mention[::-1]


def test_load_operator() -> None:
    assert isinstance(load_operator("mask", char="#"), MaskOperator)
    assert load_operator({"class_path": "tag", "init_args": {"template": "<{label}>"}}).template == "<{label}>"
    assert isinstance(load_operator(f"{__name__}.Reverse"), Reverse)
    instance = Reverse()
    assert load_operator(instance) is instance
    assert set(OPERATORS) == {"placeholder", "tag", "mask", "surrogate"}
    with pytest.raises(ValueError, match="unknown operator"):
        load_operator("nope")


def test_operators_per_label_category_and_tier_most_specific_wins() -> None:
    from thunder.deid.pipeline import Deidentifier

    text = "피고인은 전화 010-1234-5678과 메일 kim@example.com, 계좌 302-1234-5678-91을 썼다."
    deid = Deidentifier(operator="placeholder", operators={"이메일주소": "mask", "direct": {"class_path": "tag"}})
    result = deid(text)
    assert "***************" in result.text  # e-mail: its label's operator
    assert "[전화번호]" in result.text and "[계좌번호]" in result.text  # other direct identifiers: the tier's
    assert "010-1234-5678" not in result.text


def test_operator_choice_refuses_keys_outside_the_taxonomy_and_bad_specs() -> None:
    from thunder.deid.pipeline import Deidentifier

    with pytest.raises(ValueError, match=r"\['환자이름'\] name no label, category or tier 1"):
        Deidentifier(operators={"환자이름": "mask"})
    with pytest.raises(ValueError, match="a dict needs 'class_path'"):
        Deidentifier(operator={"init_args": {}})
    with pytest.raises(ValueError, match="is not a thunder.deid.operators.Operator subclass"):
        Deidentifier(operator="thunder.taxonomy.Taxonomy")


def test_operators_through_the_command_line(tmp_path, capsys) -> None:
    from thunder.cli import main

    source = tmp_path / "a.txt"
    source.write_text("메일 kim@example.com, 전화 010-1234-5678", encoding="utf-8")
    main(["deid", "--recognizers_only", str(source), "--operators", '{"전화번호": {"class_path": "mask", "init_args": {"char": "#"}}}'])
    assert capsys.readouterr().out == "메일 A, 전화 #############"


def test_surrogates_from_a_mention_folder_as_the_readme_writes_it(tmp_path, monkeypatch) -> None:
    """README: ``my_lists/사업체/가게.json`` = ``{"가게": [...]}``; a label without a list of its own draws from its
    category's folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_lists" / "사업체").mkdir(parents=True)
    (tmp_path / "my_lists" / "사업체" / "가게.json").write_text('{"가게": ["행복분식", "해돋이식당"]}', encoding="utf-8")
    operator = load_operator({"class_path": "surrogate", "init_args": {"mention_dirs": ["my_lists"]}})
    assert operator.replace(entity("김밥천국", "가게"), "김밥천국") in ("행복분식", "해돋이식당")
    assert operator.replace(entity("삼성", "기업명"), "삼성") in ("행복분식", "해돋이식당")
