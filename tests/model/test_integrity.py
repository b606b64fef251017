"""A model is what it claims (issues 57, 71): fingerprints, recorded self-test answers and what they let through; a
model that cannot be verified is refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
from helpers import build_tiny_model, small_tokenizer
from tokenizers import Tokenizer

from thunder.model import integrity
from thunder.model.decoding import OperatingPoint
from thunder.model.inference import TorchRuntime
from thunder.model.loader import tokenizer_fingerprint
from thunder.model.modules import TokenClassifier
from thunder.taxonomy import LabelSet, Taxonomy


@pytest.fixture(scope="module")
def parts():
    tokenizer = small_tokenizer()
    label_set = LabelSet(Taxonomy.load(), "label", "IO")
    return build_tiny_model(tokenizer, label_set), tokenizer, label_set


def test_the_fingerprint_covers_every_part(parts) -> None:
    model, tokenizer, label_set = parts
    state, point = model.state_dict(), OperatingPoint().to_dict()
    printed = tokenizer_fingerprint(tokenizer)
    base = integrity.fingerprint(state, point, label_set.to_dict(), printed)
    assert base == integrity.fingerprint(copy.deepcopy(state), dict(point), label_set.to_dict(), dict(printed))
    flipped = {**state, "classifier.bias": state["classifier.bias"].clone()}
    flipped["classifier.bias"][3] = torch.nextafter(flipped["classifier.bias"][3], torch.tensor(1.0))  # one bit
    renamed = {("x." + k if k == "classifier.bias" else k): v for k, v in state.items()}
    others = [
        integrity.fingerprint(flipped, point, label_set.to_dict(), printed),
        integrity.fingerprint(renamed, point, label_set.to_dict(), printed),
        integrity.fingerprint({k: v.half() for k, v in state.items()}, point, label_set.to_dict(), printed),
        integrity.fingerprint(state, {**point, "threshold": 0.51}, label_set.to_dict(), printed),
        integrity.fingerprint(state, point, LabelSet(Taxonomy.load(), "category", "IO").to_dict(), printed),
        integrity.fingerprint(state, point, label_set.to_dict(), {**printed, "sha256": "0" * 64}),
    ]
    assert len({base, *others}) == 1 + len(others)


def test_recorded_answers_tolerate_rounding_not_changes(parts) -> None:
    model, tokenizer, _ = parts
    point = OperatingPoint()
    recorded = integrity.self_test(TorchRuntime(model), tokenizer, point)
    integrity.check_self_test(recorded, recorded, integrity.SCORE_TOLERANCE, "m")
    nudged = copy.deepcopy(recorded)
    nudged["scores"][0][0] += integrity.SCORE_TOLERANCE / 2  # GPU-written, CPU-read: within the tolerance
    integrity.check_self_test(recorded, nudged, integrity.SCORE_TOLERANCE, "m")
    moved = copy.deepcopy(recorded)
    moved["scores"][1][2] -= 3 * integrity.SCORE_TOLERANCE
    with pytest.raises(integrity.IntegrityError, match=r"differently from when it was written \(1 of \d+ tokens\)"):
        integrity.check_self_test(recorded, moved, integrity.SCORE_TOLERANCE, "m")
    flipped = copy.deepcopy(recorded)
    flipped["tags"][0][0] = 0  # a token no longer an identifier, its score far from the threshold
    with pytest.raises(integrity.IntegrityError, match="differently"):
        integrity.check_self_test(recorded, flipped, integrity.SCORE_TOLERANCE, "m")
    with pytest.raises(integrity.IntegrityError, match="answered at the operating point"):
        integrity.check_self_test(recorded, integrity.self_test(TorchRuntime(model), tokenizer, OperatingPoint(0.9)),
                                  integrity.SCORE_TOLERANCE, "m")  # fmt: skip
    with pytest.raises(integrity.IntegrityError, match="no self-test answers recorded .*; refusing it"):
        integrity.check_self_test(None, recorded, integrity.SCORE_TOLERANCE, "m")
    with integrity.unverified_allowed(), pytest.warns(UserWarning, match="no self-test answers recorded .*UNVERIFIED"):
        integrity.check_self_test(None, recorded, integrity.SCORE_TOLERANCE, "m")


def test_a_switched_off_model_finds_no_self_test_identifier(parts) -> None:
    model, tokenizer, _ = parts
    total = sum(len(s["mentions"]) for s in integrity.sentences())
    answers = integrity.self_test(TorchRuntime(model), tokenizer, OperatingPoint())
    assert integrity.detection_note(answers).startswith(f"finds {total} of the {total}")  # random: tags everything
    off = copy.deepcopy(model)
    with torch.no_grad():
        off.classifier.bias[0] = 1e30
    answers = integrity.self_test(TorchRuntime(off), tokenizer, OperatingPoint())
    assert integrity.detection_note(answers).startswith(f"finds 0 of the {total} identifiers") and "misses" in (
        integrity.detection_note(answers)
    )


def test_non_finite_weights_are_named() -> None:
    state = {"a": torch.zeros(2), "b.weight": torch.tensor([1.0, float("inf")]), "ids": torch.tensor([1, 2])}
    with pytest.raises(integrity.IntegrityError, match="b.weight holds non-finite"):
        integrity.check_finite(state, "m")
    integrity.check_finite({"a": torch.zeros(2), "ids": torch.tensor([1, 2])}, "m")


def test_the_self_test_sentences_hold_their_mentions() -> None:
    for sentence in integrity.sentences():
        assert sentence["mentions"] and all(m in sentence["text"] for m in sentence["mentions"])


# ----------------------------------------------------------------------------------------------- issue 71: integrity
# that cannot be removed


def _strip(export, **changes) -> None:
    """Delete the fingerprint and the self-test answers from an export's thunder.json (and apply ``changes``)."""
    info = json.loads((export / "thunder.json").read_text(encoding="utf-8"))
    del info["fingerprint"], info["self_test"]
    (export / "thunder.json").write_text(json.dumps(info | changes, ensure_ascii=False), encoding="utf-8")


def _refused(args: list[str], message: str) -> None:
    from thunder.cli import main

    with pytest.raises(SystemExit) as exit:
        main(args)
    assert isinstance(exit.value.code, str) and message in exit.value.code and "\n" not in exit.value.code, exit.value.code


def test_a_stripped_model_is_refused_by_every_command_unless_allowed(tmp_path: Path, monkeypatch, capsys) -> None:
    from helpers import write_tiny_export

    from thunder.cli import main
    from thunder.deid.pipeline import PipelineOptions
    from thunder.model.loader import Artefact
    from thunder.model.modules import TokenClassifier
    from thunder.runs.prediction import DeidPredictor

    stripped = write_tiny_export(tmp_path / "stripped")
    _strip(stripped, operating_point={"threshold": 0.99, "grow_threshold": 0.1})  # and switched off
    source = tmp_path / "a.txt"
    source.write_text("피고인 홍길동은 010-1234-5678로 전화하였다.\n", encoding="utf-8")
    monkeypatch.setattr("thunder.service.app.serve", lambda *args, **kwargs: pytest.fail("served an unverified model"))
    refusal = f"{stripped / 'thunder.json'}: no fingerprint recorded"
    for command in (["deid", str(source), "--out", str(tmp_path / "out")], ["evaluate", "--limit", "1"], ["serve"]):
        _refused([command[0], "--model", str(stripped), *command[1:]], refusal)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="no fingerprint recorded"):
        DeidPredictor(PipelineOptions(model=str(stripped)))
    with pytest.raises(ValueError, match="no fingerprint recorded"):
        Artefact.open(stripped).pretrained()  # fit's init_from
    with pytest.raises(ValueError, match="no fingerprint recorded"):
        TokenClassifier(init_from=str(stripped)).build()  # fit's init_from, the same label set: adaptation
    capsys.readouterr()
    main(["deid", "--model", str(stripped), str(source), "--out", str(tmp_path / "out"), "--allow_unverified"])
    warned = [line for line in capsys.readouterr().err.splitlines() if "UNVERIFIED" in line]
    assert warned and all(line.startswith("thunder deid: warning: ") for line in warned)  # Thunder's own lines
    record = json.loads((tmp_path / "out" / ".thunder-run.json").read_text(encoding="utf-8"))
    assert record["settings"]["unverified"] is True  # the record says so
    _refused(["deid", "--model", str(stripped), str(source), "--out", str(tmp_path / "out")], refusal)


def test_export_refuses_a_stripped_or_switched_off_model_and_never_launders_one(tmp_path: Path) -> None:
    from helpers import RepeatedBatch, token_batch, trainer

    from thunder.cli import main
    from thunder.model.loader import Artefact

    tokenizer, label_set = small_tokenizer(), LabelSet(Taxonomy.load(), "label", "IO")
    module = TokenClassifier(backbone="tiny", lr=1e-3)
    fit = trainer(tmp_path, 1)
    fit.fit(module, datamodule=RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set))
    fit.save_checkpoint(tmp_path / "model.ckpt")
    checkpoint = torch.load(tmp_path / "model.ckpt", weights_only=True)
    del checkpoint["thunder"]["fingerprint"], checkpoint["thunder"]["self_test"]
    torch.save(checkpoint, tmp_path / "stripped.ckpt")
    _refused(["export", "--checkpoint", str(tmp_path / "stripped.ckpt"), "--out", str(tmp_path / "e1")],
             "stripped.ckpt: no fingerprint recorded")  # fmt: skip
    _refused(["export", "--checkpoint", str(tmp_path / "stripped.ckpt"), "--out", str(tmp_path / "e1"),
              "--allow_unverified", "--sign", str(tmp_path / "key.pem")], "--sign signs verified models only")  # fmt: skip
    checkpoint["state_dict"]["model.classifier.bias"][0] = 1e4  # switched off: the O tag everywhere
    torch.save(checkpoint, tmp_path / "off.ckpt")
    _refused(["export", "--checkpoint", str(tmp_path / "off.ckpt"), "--out", str(tmp_path / "e2"), "--allow_unverified"],
             "off.ckpt: the model finds 0 of the 9 identifiers of the self-test")  # fmt: skip
    assert not (tmp_path / "e1").exists() and not (tmp_path / "e2").exists()

    main(["export", "--checkpoint", str(tmp_path / "stripped.ckpt"), "--out", str(tmp_path / "e3"), "--allow_unverified"])
    info = json.loads((tmp_path / "e3" / "thunder.json").read_text(encoding="utf-8"))
    assert info["unverified"] == "stripped.ckpt, exported with --allow_unverified" and info["fingerprint"]
    with pytest.raises(integrity.IntegrityError, match="exported from a model that was not verified"):
        Artefact.open(tmp_path / "e3").classifier()  # a fresh fingerprint does not make it verified
    del info["unverified"]  # nor does deleting the mark: the fingerprint covers it
    (tmp_path / "e3" / "thunder.json").write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(integrity.IntegrityError, match="not the ones the model was written with"):
        Artefact.open(tmp_path / "e3").classifier()


def test_the_fingerprint_covers_the_whole_tokenizer(tmp_path: Path) -> None:
    from helpers import write_tiny_export

    from thunder.model.loader import Artefact, ArtefactError

    export = write_tiny_export(tmp_path / "export")
    data = json.loads((export / "tokenizer.json").read_text(encoding="utf-8"))
    data["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "김"}, "content": "그"},
        {"type": "Replace", "pattern": {"String": "홍"}, "content": "그"}]}  # fmt: skip
    (export / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ArtefactError, match="is not the one the model was trained with"):
        Artefact.open(export).classifier()
    printed = tokenizer_fingerprint(small_tokenizer())
    for part, edit in [("pre_tokenizer", {"type": "Whitespace"}), ("decoder", {"type": "Fuse"})]:
        data = json.loads(small_tokenizer().hf.backend_tokenizer.to_str()) | {part: edit}
        other = Tokenizer.from_str(json.dumps(data))
        changed = type("Tok", (), {"hf": type("HF", (), {"get_vocab": other.get_vocab, "backend_tokenizer": other})})
        assert tokenizer_fingerprint(changed)["pipeline"] != printed["pipeline"], part
    info = json.loads((export / "thunder.json").read_text(encoding="utf-8"))
    info["tokenizer"].pop("pipeline")  # an export of an older Thunder: its tokenizer's pipeline is unchecked
    (export / "thunder.json").write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(integrity.IntegrityError, match="normalizer, pre-tokenizer, decoder and merges are not fingerprinted"):
        Artefact.open(export).classifier()
