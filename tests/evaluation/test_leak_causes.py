"""tools/leak_causes.py: each leaked mention gets the first cause that applies, the training text is counted outside
its placeholders only, and a report without a recipe is refused with one line naming it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from thunder.documents.annotation import AnnotatedDocument, Placeholder

TOOL = Path(__file__).resolve().parents[2] / "tools" / "leak_causes.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("leak_causes", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _leak(text: str, survived: str, label: str = "시아래주소", tier1: str = "direct", right: str = "") -> dict:
    return {"doc_id": "d", "start": 0, "end": len(text), "label": label, "category": "c", "tier1": tier1,
            "text": text, "survived": survived, "partial": survived != text, "left": "", "right": right}  # fmt: skip


def test_regions_kept_only_when_nothing_below_the_upper_units_survived(tool) -> None:
    assert tool.regions_kept(_leak("서울 마포구 월드컵로 12", "서울 마포구"))
    assert tool.regions_kept(_leak("경기 안양시 만안구 대치동 1791", "경기 안양시 만안구"))
    assert not tool.regions_kept(_leak("서울 마포구 월드컵로 12", "서울 마포구 월드컵로"))
    assert not tool.regions_kept(_leak("마포구 율량동 1582-79", "율량동"))
    assert not tool.regions_kept(_leak("마포구", "마포구"))  # a whole leak is no kept region


def test_head_noun_outside_needs_the_corpus_convention_and_exactly_the_head_noun(tool) -> None:
    church = _leak("순복음인천교회", "교회", label="교회", tier1="quasi")
    assert tool.head_noun_outside(church, {"교회": set()})
    assert not tool.head_noun_outside(church, {"은행": set()})
    wider = _leak("순복음인천교회", "인천교회", label="교회", tier1="quasi")
    assert not tool.head_noun_outside(wider, {"교회": set()})
    unit = _leak("2203호", "호", label="호실", tier1="quasi")  # the label's name does not end it, its raw tag does
    assert not tool.head_noun_outside(unit, {"호실": set()})
    assert tool.head_noun_outside(unit, {"호실": {"호"}})


def test_unmarked_text_is_counted_outside_placeholders_at_word_starts(tool) -> None:
    text = "피고인은 사무실에서 <사무실> 큰사무실 사무실 앞"
    inner = text.index("<") + 1
    docs = [AnnotatedDocument("d", text, (Placeholder(inner, inner + 3, "위치기준", "A", 1, inner + 1),))]
    unmarked = tool.UnmarkedText(docs)
    assert unmarked.count("사무실") == 2  # not inside the placeholder, not inside 큰사무실
    assert unmarked.count("피고인") == 1
    assert tool.written_form(_leak("7", "7", label="층", tier1="quasi", right="층 복도에서")) == "7층"


def test_the_first_cause_that_applies_wins(tool) -> None:
    docs = [AnnotatedDocument("d", "사무실 " * 5 + "서울 마포구", ())]
    unmarked = tool.UnmarkedText(docs)
    address = _leak("서울 마포구 월드컵로 12", "서울 마포구")
    assert tool.cause(address, {}, unmarked, 1) == "regions kept"  # its text also stands unmarked
    assert tool.cause(_leak("사무실", "사무실", label="위치기준", tier1="quasi"), {}, unmarked, 5) == (
        "written unmarked in training"
    )
    assert tool.cause(_leak("사무실", "사무실", label="위치기준", tier1="quasi"), {}, unmarked, 6) == "missed"


def test_a_report_is_tallied_against_the_training_split_of_its_model(tool) -> None:
    docs = [AnnotatedDocument("d", "피고인은 " * 5, ())]
    read = []

    def training(model: str):
        read.append(model)
        return {"교회": set()}, tool.UnmarkedText(docs)

    report = {
        "meta": {"model": "runs/m.ckpt"},
        "leaked_mentions": [
            _leak("서울 마포구 월드컵로 12", "서울 마포구"),
            _leak("순복음인천교회", "교회", label="교회", tier1="quasi"),
            _leak("피고인", "피고인", label="기타", tier1="quasi"),
            _leak("쿠앙쿠앙", "쿠앙쿠앙", label="기타", tier1="quasi"),
        ],
    }
    counts, texts = tool.tally(report, training, 5)
    assert read == ["runs/m.ckpt"]
    assert counts == {("regions kept", "direct"): 1, ("head noun outside", "quasi"): 1,
                      ("written unmarked in training", "quasi"): 1, ("missed", "quasi"): 1}  # fmt: skip
    assert texts["missed"] == {"쿠앙쿠앙": 1}
    tool.tally(report, training, 5, model="other.ckpt")
    assert read[-1] == "other.ckpt"
    table = tool.table("r", counts, {"direct": 40, "quasi": 10}, texts, 3)
    assert "| all leaks | 1 | 3 | 4 | 8.00% |  |" in table and "| missed | 0 | 1 | 1 | 2.00% | 쿠앙쿠앙 1 |" in table


@pytest.mark.parametrize(
    ("meta", "expected"),
    [({"model": None}, "names no model"), ({"model": "absent.ckpt"}, "absent.ckpt")],
)
def test_a_report_without_a_readable_model_is_refused_in_one_line(tool, tmp_path, capsys, meta, expected) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"meta": meta, "leaks": {}, "leaked_mentions": []}), encoding="utf-8")
    assert tool.main([str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and expected in err[0]


def test_the_unmarked_count_must_be_positive(tool, tmp_path) -> None:
    with pytest.raises(SystemExit):
        tool.main([str(tmp_path / "report.json"), "--min_unmarked", "0"])
