"""Fail closed (issue 12): bad inputs, bad artefacts and interruptions never give exit 0 with an unprocessed document,
never overwrite an input or another output, never lose finished work, and never run code from a model file."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
import torch
from helpers import KeywordModel, check_invariants, write_tiny_export
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thunder.cli import main
from thunder.deid.operators import entity_key
from thunder.deid.pipeline import Deidentifier, find_keys
from thunder.model.loader import Artefact, ArtefactError
from thunder.taxonomy import LabelSet, Taxonomy

PHONE = "연락처 010-1234-5678로 전화하였다.\n"


def deid(*args: str) -> tuple[int, str]:
    """``thunder deid ARGS`` in this process, the recognizers alone unless ARGS name a model: (exit code, the error
    line or "")."""
    try:
        main(["deid", *args, *([] if "--model" in args else ["--recognizers_only"])])
    except SystemExit as error:
        if isinstance(error.code, str):
            return 1, error.code
        return error.code or 0, ""
    return 0, ""


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return write_tiny_export(tmp_path_factory.mktemp("model") / "export")


# ----------------------------------------------------------------------------------------------- security


class Payload:
    """Unpickling this object creates a marker file: proof that code from the checkpoint ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_checkpoint_with_a_pickled_payload_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.ckpt"
    torch.save({"state_dict": {}, "thunder": {"task": "token-classification", "hf_config": {}}, "x": Payload(marker)},
               evil)  # fmt: skip
    source = tmp_path / "a.txt"
    source.write_text(PHONE, encoding="utf-8")
    for args in (["deid", "--model", str(evil), str(source)], ["export", "--checkpoint", str(evil), "--out", "o"]):
        with pytest.raises(SystemExit) as exit:
            main(args)
        assert "not a loadable checkpoint of tensors and plain data" in str(exit.value.code)
        assert not marker.exists()


def test_stored_file_names_cannot_escape(tmp_path: Path, export: Path) -> None:
    from safetensors.torch import load_file

    state = {f"model.{k}": v for k, v in load_file(export / "model.safetensors").items()}
    config = json.loads((export / "config.json").read_text())
    info = json.loads((export / "thunder.json").read_text())
    for name in ("../escaped.json", "/tmp/absolute.json", "sub/dir.json", ".hidden"):
        ckpt = tmp_path / "bad.ckpt"
        files = {name: b"{}", "tokenizer.json": (export / "tokenizer.json").read_bytes()}
        torch.save({"state_dict": state, "thunder": {"task": "token-classification", "hf_config": config,
                                                     "label_set": info["label_set"], "tokenizer_files": files}}, ckpt)
        with pytest.raises(ArtefactError, match="refusing the stored file name"):
            Artefact.open(ckpt).classifier()
    assert not (tmp_path.parent / "escaped.json").exists() and not Path("/tmp/absolute.json").exists()


def test_sharded_checkpoints_are_refused_at_inference(tmp_path: Path) -> None:
    sharded = tmp_path / "last.ckpt"
    sharded.mkdir()
    (sharded / "meta.pt").write_bytes(b"")
    code, message = deid("--model", str(sharded), str(tmp_path))
    assert code == 1 and "sharded training checkpoint; export it first" in message


# ----------------------------------------------------------------------------------------------- artefacts that do not fit


def _copy(export: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(export, tmp_path / "copy"))


def _other_tokenizer():
    from thunder.language.tokenizer import ThunderTokenizer

    texts = ["전혀 다른 말뭉치에서 배운 토크나이저입니다.", "피고인 홍길동은 피해자 김철수에게 전화하였다."] * 4
    return ThunderTokenizer.train(texts, vocab_size=300, min_frequency=1)


def test_a_tokenizer_that_is_not_the_models_is_refused(tmp_path: Path, export: Path) -> None:
    broken = _copy(export, tmp_path)
    _other_tokenizer().save_pretrained(broken)
    with pytest.raises(ArtefactError, match="is not the one the model was trained with"):
        Artefact.open(broken).classifier()


def test_a_permuted_vocabulary_is_refused(tmp_path: Path, export: Path) -> None:
    broken = _copy(export, tmp_path)
    data = json.loads((broken / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    first, second = sorted(vocab, key=vocab.get)[10:12]
    vocab[first], vocab[second] = vocab[second], vocab[first]
    (broken / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ArtefactError, match="tokenizer"):
        Artefact.open(broken).classifier()


def test_a_label_set_that_does_not_fit_the_head_is_refused(tmp_path: Path, export: Path) -> None:
    broken = _copy(export, tmp_path)
    info = json.loads((broken / "thunder.json").read_text(encoding="utf-8"))
    info["label_set"] = LabelSet(Taxonomy.load(), "category", "IO").to_dict()  # valid, but not the head's
    (broken / "thunder.json").write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    source = _tree(tmp_path, {"a.txt": PHONE}) / "a.txt"
    code, message = deid("--model", str(broken), str(source))
    assert code == 1 and "refusing to relabel" in message


# ----------------------------------------------------------------------------------------------- a model is what it claims
# (issue 57)


def _edit_weights(export: Path, edit: Callable[[dict[str, torch.Tensor]], None]) -> None:
    from safetensors.torch import load_file, save_file

    state = load_file(export / "model.safetensors")
    edit(state)
    save_file(state, export / "model.safetensors", metadata={"format": "pt"})


def _o_bias(value: float) -> Callable[[dict[str, torch.Tensor]], None]:
    def edit(state: dict[str, torch.Tensor]) -> None:
        state["classifier.bias"][0] = value  # the "O" tag: every token predicted outside any entity

    return edit


def _edit_info(export: Path, **changes) -> None:
    info = json.loads((export / "thunder.json").read_text(encoding="utf-8"))
    (export / "thunder.json").write_text(json.dumps(info | changes, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("nan bias", "holds non-finite values"),
        ("huge bias", "not the ones the model was written with"),
        ("huge bias, fingerprint rewritten", "answers the self-test differently"),
        ("flipped bytes", "not the ones the model was written with"),
        ("edited threshold", "not the ones the model was written with"),
        ("edited threshold, fingerprint rewritten", "the self-test was answered at the operating point"),
        ("config.json of 14 labels", "config.json: does not fit the weights (classifier.bias: (646,) in the weights, "
         "(14,) by config.json, which names 14 labels)"),
    ],
)
def test_a_model_that_is_not_what_it_claims_does_not_run(tmp_path: Path, export: Path, case: str, message: str) -> None:
    from thunder.model import integrity

    broken = _copy(export, tmp_path)
    info = json.loads((broken / "thunder.json").read_text(encoding="utf-8"))
    if "bias" in case:
        _edit_weights(broken, _o_bias(float("nan") if case == "nan bias" else 1e30))
    elif case == "flipped bytes":
        data = bytearray((broken / "model.safetensors").read_bytes())
        data[-4000:-3996] = bytes(b ^ 0xFF for b in data[-4000:-3996])
        (broken / "model.safetensors").write_bytes(bytes(data))
    elif "threshold" in case:
        _edit_info(broken, operating_point={"threshold": 0.999, "grow_threshold": 0.1})
    else:
        config = json.loads((broken / "config.json").read_text(encoding="utf-8"))
        config["id2label"] = {str(i): name for i, name in enumerate(list(config["id2label"].values())[:14])}
        config["label2id"] = {name: int(i) for i, name in config["id2label"].items()}
        (broken / "config.json").write_text(json.dumps(config), encoding="utf-8")
    if "fingerprint rewritten" in case:  # one who knows the scheme covers the edit: the self-test still tells
        from transformers import AutoModelForTokenClassification

        from thunder.model.decoding import OperatingPoint

        current = json.loads((broken / "thunder.json").read_text(encoding="utf-8"))
        model = AutoModelForTokenClassification.from_pretrained(broken)
        point = OperatingPoint.from_dict(current.get("operating_point"))
        digest = integrity.fingerprint(model.state_dict(), point.to_dict(), info["label_set"], info["tokenizer"],
                                       current.get("windows"), None, **integrity.covered(current, model.config))
        _edit_info(broken, fingerprint=digest)
    source = _tree(tmp_path, {"a.txt": "피고인 홍길동은 피해자 김영희에게 010-1234-5678로 연락하였다.\n"}) / "a.txt"
    code, error = deid("--model", str(broken), str(source), "--out", str(tmp_path / "out"))
    assert code == 1 and message in error and "\n" not in error, error
    assert not (tmp_path / "out").exists()  # nothing de-identified with it


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("cut-off weights", "model.safetensors: not a complete safetensors file, cut off or damaged (Error while "
         "deserializing header"),
        ("no tokenizer.json", "tokenizer.json: missing, the model's tokenizer is incomplete"),
        ("damaged tokenizer.json", "tokenizer.json: does not load as a tokenizer (KeyError: "),
        ("config.json of 3 labels", "config.json: does not fit the weights (classifier.bias: (646,) in the weights, "
         "(3,) by config.json, which names 3 labels)"),
    ],
)
def test_a_model_that_does_not_load_is_one_line(tmp_path: Path, export: Path, capfd, case: str, message: str) -> None:
    """Issue 71: no traceback, no transformers advice, no load report with colour codes: one line naming the file."""
    broken = _copy(export, tmp_path)
    if case == "cut-off weights":
        data = (broken / "model.safetensors").read_bytes()
        (broken / "model.safetensors").write_bytes(data[: len(data) // 2])
    elif case == "no tokenizer.json":
        (broken / "tokenizer.json").unlink()
    elif case == "damaged tokenizer.json":
        (broken / "tokenizer.json").write_text('{"model": {"type": "BPE", "vocab": 5}}', encoding="utf-8")
    else:
        config = json.loads((broken / "config.json").read_text(encoding="utf-8"))
        config["id2label"] = {str(i): name for i, name in enumerate(list(config["id2label"].values())[:3])}
        config["label2id"] = {name: int(i) for i, name in config["id2label"].items()}
        (broken / "config.json").write_text(json.dumps(config), encoding="utf-8")
    source = _tree(tmp_path, {"a.txt": PHONE}) / "a.txt"
    capfd.readouterr()
    code, error = deid("--model", str(broken), str(source), "--out", str(tmp_path / "out"))
    err = capfd.readouterr().err
    file = "config.json" if "labels" in case else "tokenizer.json" if "tokenizer" in case else "model.safetensors"
    assert code == 1 and error.startswith(f"thunder deid: error: {broken}") and file in error and message in error
    assert "\n" not in error
    assert not any(noise in err for noise in ("LOAD REPORT", "\x1b[", "Traceback", "sentencepiece")), err
    assert not (tmp_path / "out").exists()


def test_an_edited_checkpoint_is_refused_and_export_does_not_launder_it(tmp_path: Path) -> None:
    from helpers import RepeatedBatch, small_tokenizer, token_batch, trainer

    from thunder.model.modules import TokenClassifier

    tokenizer, label_set = small_tokenizer(), LabelSet(Taxonomy.load(), "label", "IO")
    module = TokenClassifier(backbone="tiny", lr=1e-3)
    fit = trainer(tmp_path, 1)
    fit.fit(module, datamodule=RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set))
    fit.save_checkpoint(tmp_path / "model.ckpt")
    assert Artefact.open(tmp_path / "model.ckpt").classifier().self_test is not None  # loads as written
    checkpoint = torch.load(tmp_path / "model.ckpt", weights_only=True)
    checkpoint["thunder"]["operating_point"]["threshold"] = 0.999
    torch.save(checkpoint, tmp_path / "edited.ckpt")
    with pytest.raises(ValueError, match="not the ones the model was written with"):
        Artefact.open(tmp_path / "edited.ckpt").classifier()
    with pytest.raises(SystemExit, match="not the ones the model was written with"):
        main(["export", "--checkpoint", str(tmp_path / "edited.ckpt"), "--out", str(tmp_path / "export")])
    checkpoint["thunder"]["operating_point"]["threshold"] = 0.5
    checkpoint["state_dict"]["model.classifier.bias"][0] = float("nan")
    torch.save(checkpoint, tmp_path / "nan.ckpt")
    with pytest.raises(ValueError, match="model.classifier.bias|classifier.bias holds non-finite"):
        Artefact.open(tmp_path / "nan.ckpt").classifier()


def test_export_refuses_another_tokenizer(tmp_path: Path) -> None:
    from helpers import RepeatedBatch, token_batch, trainer

    from thunder.data import DEMO_TOKENIZER
    from thunder.language.tokenizer import ThunderTokenizer
    from thunder.model.export import export_checkpoint
    from thunder.model.modules import TokenClassifier

    tokenizer = ThunderTokenizer.from_pretrained(DEMO_TOKENIZER)
    label_set = LabelSet(Taxonomy.load(), "category", "IO")
    module = TokenClassifier(backbone="tiny", lr=1e-3)
    fit = trainer(tmp_path, 1)
    fit.fit(module, datamodule=RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set))
    fit.save_checkpoint(tmp_path / "model.ckpt")
    other = tmp_path / "other"
    _other_tokenizer().save_pretrained(other)
    with pytest.raises(ArtefactError, match="is not the one the model was trained with"):
        export_checkpoint(tmp_path / "model.ckpt", tmp_path / "out", tokenizer=other)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["deid", "evaluate", "serve", "export"])
def test_a_signed_model_changed_since_is_refused_by_every_command(tmp_path: Path, export: Path, monkeypatch,
                                                                  command: str) -> None:  # fmt: skip
    pytest.importorskip("model_signing.signing", reason="needs the sign extra")
    from helpers import write_keys

    from thunder.model import signing

    private, public = write_keys(tmp_path)
    signed = _copy(export, tmp_path)
    signing.sign(signed, private)
    data = bytearray((signed / "model.safetensors").read_bytes())
    data[-4000] ^= 0x01  # one bit of one weight
    (signed / "model.safetensors").write_bytes(bytes(data))
    monkeypatch.setattr("thunder.service.app.serve", lambda *args, **kwargs: pytest.fail("served an unverified model"))
    source = _tree(tmp_path, {"in/a.txt": PHONE}) / "in" / "a.txt"
    model = ["--checkpoint" if command == "export" else "--model", str(signed), "--verify", str(public)]
    rest = {"deid": [str(source), "--out", str(tmp_path / "out")], "export": ["--out", str(tmp_path / "out")]}
    with pytest.raises(SystemExit) as exit:
        main([command, *model, *rest.get(command, [])])
    expected = f"thunder {command}: error: {signed}: does not match its signature (changed: model.safetensors)"
    assert exit.value.code == expected
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------------------------- options out of range


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--batch_size", "-1", "batch_size must be a whole number of at least 1"),
        ("--batch_size", "0", "batch_size must be a whole number of at least 1"),
        ("--max_length", "-5", "max_length must be at least 3"),
        ("--stride", "-1", "stride (tokens shared by consecutive windows) must be >= 0"),
        ("--stride", "510", "must be >= 0 and < max_length - 2 = 510"),
        ("--threshold", "0", "threshold must lie strictly between 0 and 1"),
        ("--threshold", "1.5", "threshold must lie strictly between 0 and 1"),
        ("--operator", "nonsense", "unknown operator 'nonsense'"),
        ("--operator", "no.such.Module", "unknown operator 'no.such.Module'"),
        ("--recognizers", "[no_such_recognizer]", "unknown recognizer 'no_such_recognizer'"),
        ("--operators", '{"no_such_label": "mask"}', "name no label, category or tier 1"),
    ],
)
def test_options_out_of_range_are_refused_up_front(tmp_path: Path, option: str, value: str, message: str) -> None:
    source = tmp_path / "a.txt"
    source.write_text(PHONE, encoding="utf-8")
    code, error = deid(str(source), "--out", str(tmp_path / "out"), option, value)
    assert code == 1 and message in error and error.startswith("thunder deid: error:")
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------------------------- nothing overwritten


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


VARIANTS = [  # (text, what must not stay, what must stay)
    ("전화 0 1 0 - 1 2 3 4 - 5 6 7 8로 연락하였다.", "5 6 7", "로 연락"),
    ("주민등록번호 &#56;&#48;&#48;&#49;&#48;&#49;-&#49;&#50;&#51;&#52;&#53;&#54;&#55; 이다.", "&#55;", " 이다."),
    ("주민등록번호 &#x38;00101-1234567 이다.", "1234567", " 이다."),
    ("주민등록번호 800101-123\n4567 이다.", "4567", " 이다."),
    ("전화 010-1234-56\n78로 연락하였다.", "78로", "로 연락"),
    ("피고인 김\u200b민수는 말하였다.", "민수", "는 말하였다"),
    ("피고인 '김민수'는 말하였다.", "김민수", "'는 말하였다"),
    ("피고인 1. 김철수는\n범행하였다.", "김철수", "는\n범행"),
]


@pytest.mark.parametrize(("text", "gone", "kept"), VARIANTS, ids=[f"variant-{i}" for i in range(len(VARIANTS))])
def test_identifiers_written_another_way_are_found_without_a_model(text: str, gone: str, kept: str) -> None:
    """Class: variants (issue 80). Digits typed one by one, numeric character references, a digit group wrapped
    inside, a zero-width space inside a name after its role, a quoted name, a name ending a list item's line: the
    recognizers alone replace them, and the particle after them stays."""
    from thunder.deid.pipeline import Deidentifier

    result = Deidentifier()(text)
    assert gone not in result.text and kept in result.text, result.text


def test_a_long_quoted_word_after_a_role_is_read_not_refused() -> None:
    """A quoted word after a role longer than a name (a title, a defined term) is no name and breaks nothing."""
    from thunder.deid.pipeline import Deidentifier

    text = "증인 '대한민국헌법해설'을 읽었다. 피고 '한국전력공사'는 답하였다.\n"
    assert Deidentifier()(text).text == text


def test_one_identifier_written_two_ways_is_one_entity() -> None:
    """The same resident number as digits and as character references, a name with and without a zero-width space:
    one placeholder each (the entity's key is read as the recognizers read it)."""
    from thunder.deid.pipeline import Deidentifier

    text = ("주민등록번호 800101-1234567, 다시 &#56;00101-1234567.\n피고인 김민수는 말하였다. 피고인 김\u200b민수는 "
            "웃었다.\n")  # fmt: skip
    result = Deidentifier()(text)
    assert result.text == "주민등록번호 A, 다시 A.\n피고인 B는 말하였다. 피고인 B는 웃었다.\n", result.text


def test_a_mistyped_key_file_is_refused_and_never_created(tmp_path: Path) -> None:
    """Issue 82: a mapping that holds records takes the key that sealed them; a key file that does not exist is
    refused in one line naming both options, and no stray key is left behind."""
    _tree(tmp_path, {"in/a.txt": PHONE, "in2/b.txt": PHONE})
    mapping, key = tmp_path / "m.jsonl", tmp_path / "k.key"
    assert deid(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--mapping", str(mapping), "--key_file",
                str(key)) == (0, "")  # fmt: skip
    code, line = deid(str(tmp_path / "in2"), "--out", str(tmp_path / "out2"), "--mapping", str(mapping), "--key_file",
                      str(tmp_path / "k.kye"))  # fmt: skip
    assert code == 1 and f"--key_file {tmp_path / 'k.kye'} does not exist, but --mapping {mapping} holds" in line, line
    assert not (tmp_path / "k.kye").exists()


def test_a_folder_that_cannot_be_read_is_a_failure_with_its_name(tmp_path: Path, monkeypatch) -> None:
    """Class: records that prove (issue 80). A subfolder the run cannot read is one line naming it and a non-zero
    exit, never "1 written, 0 failed" over the folders it could read."""
    _tree(tmp_path, {"in/a.txt": PHONE, "in/locked/b.txt": PHONE})
    locked, scandir = str(tmp_path / "in" / "locked"), os.scandir

    def refusing(path=".") -> object:  # what a folder without read permission answers (root reads them all)
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", locked)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    code, line = deid(str(tmp_path / "in"), "--out", str(tmp_path / "out"))
    assert code == 1 and line.startswith(f"thunder deid: error: {locked}: a folder that cannot be read"), line
    assert not (tmp_path / "out" / "a.txt").exists()


def test_the_contents_of_a_word_list_option_are_in_the_settings_key(tmp_path: Path, export: Path) -> None:
    """Class: records that prove (issue 80). A ``--genre_words`` file edited between two runs into one folder changes
    the outputs' settings: the second run is refused, not counted "already done"."""
    _tree(tmp_path, {"in/a.txt": PHONE, "words.txt": "사건\n"})
    args = [str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--model", str(export), "--genre_words",
            str(tmp_path / "words.txt")]  # fmt: skip
    assert deid(*args) == (0, "")
    (tmp_path / "words.txt").write_text("사건\n피해자\n", encoding="utf-8")
    code, line = deid(*args)
    assert code == 1 and "made under other settings" in line and "genre_words" in line, line


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_lock_file_linked_elsewhere_is_refused_and_never_written_through(tmp_path: Path, link: str) -> None:
    """Issue 80: ``OUT/.thunder.lock`` linked to an input is refused in one line; the input keeps its text."""
    source = _tree(tmp_path, {"in/a.txt": PHONE}) / "in" / "a.txt"
    (tmp_path / "out").mkdir()
    lock = tmp_path / "out" / ".thunder.lock"
    lock.symlink_to(source) if link == "symbolic" else lock.hardlink_to(source)
    code, error = deid(str(source), "--out", str(tmp_path / "out"))
    assert (code, error) == (1, f"thunder deid: error: {lock} is not a lock file of its own (a link, or not a plain "
                                "file); remove it or choose another directory")  # fmt: skip
    assert source.read_text(encoding="utf-8") == PHONE and not (tmp_path / "out" / "a.txt").exists()


def test_inputs_with_the_same_name_keep_their_layout(tmp_path: Path) -> None:
    _tree(tmp_path, {"a/x.txt": PHONE, "b/x.txt": "메일 kim@example.com", "c/d.jsonl": '{"id": 1, "text": "1"}\n',
                     "e/d.jsonl": '{"id": 1, "text": "2"}\n'})  # fmt: skip
    out = tmp_path / "out"
    inputs = [str(tmp_path / p) for p in ("a/x.txt", "b/x.txt", "c/d.jsonl", "e/d.jsonl")]
    assert deid(*inputs, "--out", str(out)) == (0, "")
    assert (out / "a" / "x.txt").read_text(encoding="utf-8") == "연락처 A로 전화하였다.\n"
    assert (out / "b" / "x.txt").read_text(encoding="utf-8") == "메일 A"
    assert [json.loads(p.read_text())["text"] for p in (out / "c" / "d.jsonl", out / "e" / "d.jsonl")] == ["1", "2"]


def test_a_symlinked_input_keeps_the_links_layout(tmp_path: Path) -> None:
    _tree(tmp_path, {"elsewhere/real.txt": PHONE, "in/a.txt": "메일 kim@example.com"})
    (tmp_path / "in" / "sub").mkdir()
    (tmp_path / "in" / "sub" / "link.txt").symlink_to(tmp_path / "elsewhere" / "real.txt")
    out = tmp_path / "out"
    assert deid(str(tmp_path / "in"), "--out", str(out)) == (0, "")
    assert (out / "sub" / "link.txt").read_text(encoding="utf-8") == "연락처 A로 전화하였다.\n"
    assert (out / "a.txt").read_text(encoding="utf-8") == "메일 A"


@pytest.mark.parametrize(
    ("layout", "args", "message"),
    [
        ({"in/d.jsonl": '{"id": "x", "text": "1"}\n{"id": "y", "text": "2"}\n{"id": "x", "text": "3"}\n'},
         ["in", "--out", "out"], "d.jsonl:3: id 'x' repeats line 1"),
        ({"in/a.txt": PHONE}, ["in", "--out", "in"], "is inside the input directory"),
        ({"in/a.txt": PHONE}, ["in", "--out", "in/out"], "is inside the input directory"),
        ({"in/a.txt": PHONE}, ["in/a.txt", "in/a.txt", "--out", "out"], "given twice"),
        ({"in/a.txt": PHONE}, ["in", "--spans", "in/a.txt"], "is an input file"),
        ({"in/a.txt": PHONE}, ["in", "--in_place", "--out", "out"], "--in_place writes each output over its input"),
    ],
)
def test_collisions_are_refused_before_any_work(tmp_path: Path, monkeypatch, layout, args, message) -> None:
    monkeypatch.chdir(_tree(tmp_path, layout))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    code, error = deid(*args)
    assert code == 1 and message in error
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_in_place_replaces_the_inputs_when_asked(tmp_path: Path) -> None:
    _tree(tmp_path, {"in/a.txt": PHONE})
    assert deid(str(tmp_path / "in"), "--in_place") == (0, "")
    assert (tmp_path / "in" / "a.txt").read_text(encoding="utf-8") == "연락처 A로 전화하였다.\n"


def test_directories_read_every_known_extension_and_say_what_they_skip(tmp_path: Path, capsys) -> None:
    _tree(tmp_path, {"in/A.TXT": PHONE, "in/b.JsonL": '{"id": "j", "text": "010-1234-5678"}\n', "in/c.csv": "x"})
    assert deid(str(tmp_path / "in"), "--out", str(tmp_path / "out")) == (0, "")
    assert (tmp_path / "out" / "A.TXT").is_file() and (tmp_path / "out" / "b.JsonL").is_file()
    assert "skipped files that are not .docm/.docx/.hwp/.hwpx/.jsonl/.md/.pdf/.txt (1 .csv)" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- nothing lost


def test_bad_documents_are_reported_and_the_others_written(tmp_path: Path, capsys) -> None:
    records = ['{"id": "ok", "text": "010-1234-5678"}', '{"id": "lone", "text": "\\ud800 홍길동"}',
               '{"id": "number", "text": 5}', '{"id": "masked", "text": "주민번호 900101-1******, 메모 900101-1 010-1234-5678"}',
               '{"id": "last", "text": "kim@example.com"}']  # fmt: skip
    _tree(tmp_path, {"in/docs.jsonl": "\n".join(records) + "\n"})
    code, _ = deid(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--operator", "mask", "--batch_size", "8")
    err = capsys.readouterr().err
    assert code == 1
    assert "docs.jsonl:2: text holds a lone surrogate at character 0" in err
    assert "docs.jsonl:3: bad JSONL record ('text' is not a string)" in err
    assert "3 written, 2 failed, of 5 documents" in err  # the text holding a masked form is masked too
    written = [json.loads(line) for line in (tmp_path / "out" / "docs.jsonl").read_text().splitlines()]
    assert [r["id"] for r in written] == ["ok", "masked", "last"]


def test_interrupted_run_keeps_finished_work_and_resumes(tmp_path: Path, monkeypatch, capsys) -> None:
    layout = {f"in/{i}.txt": f"문서 {i} 연락처 010-1234-56{i:02d}" for i in range(5)}
    layout["in/d.jsonl"] = "".join(json.dumps({"id": f"j{i}", "text": f"010-9999-00{i:02d}"}) + "\n" for i in range(3))
    _tree(tmp_path, layout)
    out, spans = tmp_path / "out", tmp_path / "spans.jsonl"
    calls = {"n": 0}
    original = Deidentifier.deidentify_batch

    def interrupted(self, texts):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return original(self, texts)

    monkeypatch.setattr(Deidentifier, "deidentify_batch", interrupted)
    code, _ = deid(str(tmp_path / "in"), "--out", str(out), "--spans", str(spans), "--batch_size", "2")
    assert code == 130 and "interrupted: 6 of 8 documents written" in capsys.readouterr().err
    assert len(list(out.rglob("*.txt"))) == 5 and len((out / "d.jsonl").read_text().splitlines()) == 1
    (out / ".0.txt.thunder-abc.tmp").write_text("left by a killed run")
    with (out / "d.jsonl").open("a") as stream:
        stream.write('{"id": "j1", "te')  # a line cut off by kill -9
    monkeypatch.setattr(Deidentifier, "deidentify_batch", original)
    assert deid(str(tmp_path / "in"), "--out", str(out), "--spans", str(spans)) == (0, "")
    assert "2 written, 6 already done, 0 failed, of 8 documents" in capsys.readouterr().err
    assert [json.loads(line)["id"] for line in (out / "d.jsonl").read_text().splitlines()] == ["j0", "j1", "j2"]
    assert not list(out.rglob("*.tmp"))
    span_docs = [json.loads(line)["doc"] for line in spans.read_text().splitlines()]
    assert len(span_docs) == len(set(span_docs)) == 8  # one phone per document, none twice


def test_a_full_disk_stops_with_one_line_and_the_run_resumes(tmp_path: Path, monkeypatch) -> None:
    import errno

    import thunder.runs.plan as plan

    _tree(tmp_path, {f"in/{i}.txt": f"문서 {i} 연락처 010-1234-56{i:02d}" for i in range(4)})
    out, original, calls = tmp_path / "out", plan.write_atomic, {"n": 0}

    def full(path, text, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return original(path, text, *args, **kwargs)

    monkeypatch.setattr(plan, "write_atomic", full)
    code, error = deid(str(tmp_path / "in"), "--out", str(out), "--batch_size", "1")
    assert code == 1 and error.startswith("thunder deid: error: No space left on device: ")
    assert "of 4 documents written; run the same command again to resume" in error
    monkeypatch.setattr(plan, "write_atomic", original)
    assert deid(str(tmp_path / "in"), "--out", str(out)) == (0, "")
    assert sorted(p.name for p in out.glob("*.txt")) == [f"{i}.txt" for i in range(4)]


def test_a_full_disk_at_the_review_queue_is_one_line_and_the_run_writes_it_again(tmp_path: Path, monkeypatch) -> None:
    import thunder.deid.triage as triage

    _tree(tmp_path, {f"in/{i}.txt": f"문서 {i} 연락처 010-1234-56{i:02d}" for i in range(2)})
    queue, original = tmp_path / "q.jsonl", triage.write_atomic
    args = [str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--review_queue", str(queue)]

    def no_space(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def full(path, text, *rest, **options):  # the queue's own write_atomic, on a disk that fills up as it ends
        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", no_space)
            return original(path, text, *rest, **options)

    monkeypatch.setattr(triage, "write_atomic", full)
    code, error = deid(*args)
    assert code == 1 and "Errno" not in error and "\n" not in error
    assert error == (f"thunder deid: error: No space left on device: {queue}; the review queue was not written; run "
                     "the same command again to write it")  # fmt: skip
    assert not queue.exists() and not list(tmp_path.glob(".q.jsonl*.tmp"))
    monkeypatch.undo()
    assert deid(*args) == (0, "")
    assert sorted(json.loads(line)["file"] for line in queue.read_text().splitlines()) == ["0.txt", "1.txt"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "{tmp}/file"], "--out {tmp}/file is a file; give a directory"),
        (["--out", "{tmp}/o", "--spans", "{tmp}/x", "--mapping", "{tmp}/x", "--key_file", "{tmp}/k"],
         "--spans and --mapping name the same file ({tmp}/x)"),
        (["--out", "{tmp}/o", "--mapping", "{tmp}/m.jsonl", "--key_file", "{tmp}/random.key"],
         "random.key: not a Thunder mapping key"),
    ],
)
def test_small_mistakes_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "random.key").write_bytes(bytes(range(128, 192)))
    source = _tree(tmp_path, {"a.txt": PHONE}) / "a.txt"
    code, error = deid(str(source), *(arg.format(tmp=tmp_path) for arg in args))
    assert code == 1 and message.format(tmp=tmp_path) in error and "Errno" not in error and "codec" not in error


def test_in_place_keeps_the_files_owner_and_mode(tmp_path: Path) -> None:
    source = _tree(tmp_path, {"a.txt": PHONE}) / "a.txt"
    source.chmod(0o644)
    owner = (4321, 4321) if os.geteuid() == 0 else (os.geteuid(), os.getegid())  # root: someone else's file
    os.chown(source, *owner)
    assert deid(str(source), "--in_place") == (0, "")
    status = source.stat()
    assert (status.st_uid, status.st_gid, status.st_mode & 0o777) == (*owner, 0o644)
    assert "010-1234-5678" not in source.read_text(encoding="utf-8")


def test_a_full_disk_never_leaves_part_of_a_key(tmp_path: Path, monkeypatch, caplog) -> None:
    """The key is written whole or not at all: a full disk leaves no key (nor its temporary file), says so in one
    line, and the same command then creates the key and runs."""
    source = _tree(tmp_path, {"a.txt": PHONE}) / "a.txt"
    args = [str(source), "--out", str(tmp_path / "out"), "--mapping", str(tmp_path / "m.jsonl"), "--key_file",
            str(tmp_path / "keys" / "k")]  # fmt: skip
    synced = os.fsync

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    code, error = deid(*args)
    assert code == 1 and error.startswith("thunder deid: error: No space left on device") and "Errno" not in error
    assert list((tmp_path / "keys").iterdir()) == [] and "created a new mapping key" not in caplog.text
    monkeypatch.setattr(os, "fsync", synced)
    assert deid(*args) == (0, "")
    assert (tmp_path / "keys" / "k").read_text().startswith("thunder-mapping-key:v1:")
    assert (tmp_path / "keys" / "k").stat().st_mode & 0o777 == 0o600 and "created a new mapping key" in caplog.text


def test_sigterm_ends_the_run_with_130_and_a_line(tmp_path: Path) -> None:
    _tree(tmp_path, {f"in/{i:03d}.txt": PHONE * 20 for i in range(400)})
    process = subprocess.Popen([sys.executable, "-m", "thunder.cli", "deid", "--recognizers_only", str(tmp_path / "in"), "--out",
                                str(tmp_path / "out"), "--batch_size", "1"], stderr=subprocess.PIPE, text=True)  # fmt: skip
    out = tmp_path / "out"
    for _ in range(2400):  # up to 2 minutes: starting Python with torch and Lightning is slow on a loaded machine
        if out.is_dir() and any(out.iterdir()):
            break
        subprocess.run(["sleep", "0.05"])
    process.terminate()
    err = process.communicate(timeout=120)[1]
    assert process.returncode == 130
    assert "interrupted:" in err and "of 400 documents written" in err and "Traceback" not in err


def test_placeholders_skip_letters_already_standing_in_the_text() -> None:
    result = Deidentifier()("피고인 A는 피해자 B에게 010-1234-5678로, C는 02-123-4567로 연락하였다.")
    assert result.text == "피고인 A는 피해자 B에게 D로, C는 E로 연락하였다."


# ----------------------------------------------------------------------------------------------- properties


TEXTS = st.lists(
    st.sampled_from(["피고인 ", "홍길동", "은 ", "010-1234-5678", "로 ", "kim@example.com", "A", "B는 ", "\n", "12가3456",
                     "900101-1234568", "피해자 ", "에게 ", "서울 ", ", "]),  # fmt: skip
    max_size=30,
).map("".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(TEXTS, min_size=1, max_size=4), operator=st.sampled_from(["placeholder", "tag", "mask"]),
       batch_size=st.integers(1, 3))  # fmt: skip
def test_property_outputs_and_exit_code(tmp_path_factory, texts: list[str], operator: str, batch_size: int) -> None:
    root = tmp_path_factory.mktemp("prop")
    source = root / "in.jsonl"
    source.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(texts)))
    spans = root / "spans.jsonl"
    deidentifier = Deidentifier(operator=operator)
    expected_failures = 0
    for text in texts:
        try:
            result = deidentifier(text)
        except RuntimeError:
            expected_failures += 1
            continue
        assert all(text[s.start : s.end] == s.text for s in result.spans)  # offsets index the original
        if operator == "placeholder":
            check_invariants(text, result)  # outside replaced spans the text is identical (particles aside)
        assert not find_keys(result.text, {entity_key(s.text) for s in result.spans})  # nothing detected survives
    code, _ = deid(str(source), "--out", str(root / "out"), "--spans", str(spans), "--operator", operator,
                   "--batch_size", str(batch_size))  # fmt: skip
    assert (code != 0) == (expected_failures > 0)
    written = (root / "out" / "in.jsonl").read_text().splitlines() if (root / "out" / "in.jsonl").exists() else []
    assert len(written) == len(texts) - expected_failures


def test_jsonl_lines_end_at_newlines_only(tmp_path: Path) -> None:
    """U+2028 and U+0085 are written raw inside JSON strings (ensure_ascii=False): not line breaks."""
    record = json.dumps({"id": "x", "text": "전화\u2028010-1234-5678\u0085끝"}, ensure_ascii=False)
    _tree(tmp_path, {"in.jsonl": record + "\n"})
    assert deid(str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "out")) == (0, "")
    written = json.loads((tmp_path / "out" / "in.jsonl").read_text(encoding="utf-8"))
    assert written == {"id": "x", "text": "전화\u2028A\u0085끝"}


# ----------------------------------------------------------------------------------------------- output files (issue 30)


MINE = '{"mine": "a record of the user\'s"}'
MAIL = "메일 kim@example.com\n"
MEETING = "그 무렵 김철수와 이영희는 서울 마포구 월드컵로 12에서 만났다. 연락처 010-1234-5678.\n"


@dataclass(frozen=True)
class Link:
    """A symbolic link to ``target`` (as written, relative to the link's folder)."""

    target: str


@dataclass(frozen=True)
class HardLink:
    """A second name of the file ``target`` (relative to the case's folder, created before it)."""

    target: str


@dataclass(frozen=True)
class Case:
    """Files to create (``Link`` for a symbolic link, ``HardLink`` for a hard link), then steps: ``thunder deid``
    runs in that folder (arguments, exit code, a fragment of its stderr or error line) or actions between them; then
    what must hold."""

    files: dict[str, str | Link | HardLink]
    steps: list
    holds: Callable[[Path], bool] = lambda root: True


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _lose_output(name: str) -> Callable[[Path, dict], None]:
    """What kill -9 between a document's spans and mapping records and its output leaves: no output."""
    return lambda root, state: (root / "out" / name).unlink()


def _hold_the_lock(root: Path, state: dict) -> None:
    """A real run into out/, left running: 400 documents, one at a time."""
    _tree(root, {f"many/{i:03d}.txt": PHONE * 20 for i in range(400)})
    state["run"] = subprocess.Popen([sys.executable, "-m", "thunder.cli", "deid", "--recognizers_only", "many", "--out", "out", "--spans",
                                     "spans.jsonl", "--batch_size", "1"], cwd=root, stderr=subprocess.DEVNULL)  # fmt: skip
    for _ in range(1200):
        if len(list((root / "out").glob("*.txt"))) >= 2:
            return
        subprocess.run(["sleep", "0.05"])
    raise AssertionError("the first run wrote nothing")


def _kill_9(root: Path, state: dict) -> None:
    state["run"].kill()
    state["run"].wait()


OUTPUT_CASES = {
    "--spans appends: the records already there stay": Case(
        {"d1.txt": PHONE, "d2.txt": MAIL, "all.jsonl": MINE + "\n"},
        [(["d1.txt", "--spans", "all.jsonl"], 0, ""), (["d2.txt", "--spans", "all.jsonl"], 0, "")],
        lambda root: [r.get("doc") for r in records(root / "all.jsonl")] == [None, "d1.txt", "d2.txt"],
    ),
    "--mapping appends: the records already there stay": Case(
        {"d1.txt": PHONE, "d2.txt": MAIL},
        [(["d1.txt", "--mapping", "m.jsonl", "--key_file", "k"], 0, ""),
         (["d2.txt", "--mapping", "m.jsonl", "--key_file", "k"], 0, "")],  # fmt: skip
        lambda root: sorted(r["doc"] for r in _opened(root)) == ["d1.txt", "d2.txt"],
    ),
    "--mapping on someone else's JSONL is refused, never emptied": Case(
        {"d1.txt": PHONE, "m.jsonl": MINE + "\n"},
        [(["d1.txt", "--mapping", "m.jsonl", "--key_file", "k", "--out", "out"], 1, "m.jsonl:1: not a Thunder mapping")],
        lambda root: (root / "m.jsonl").read_text() == MINE + "\n" and not (root / "out/d1.txt").exists(),
    ),
    "a last line without its newline is kept": Case(
        {"d1.txt": PHONE, "all.jsonl": MINE},
        [(["d1.txt", "--spans", "all.jsonl"], 0, "")],
        lambda root: [r.get("doc") for r in records(root / "all.jsonl")] == [None, "d1.txt"],
    ),
    "a cut-off last line of someone else's is refused, never truncated": Case(
        {"d1.txt": PHONE, "all.jsonl": MINE + "\n" + MINE[:9]},
        [(["d1.txt", "--spans", "all.jsonl", "--out", "out"], 1, "all.jsonl:2: the last line is not complete JSON")],
        lambda root: (root / "all.jsonl").read_text() == MINE + "\n" + MINE[:9] and not (root / "out/d1.txt").exists(),
    ),
    "a resumed run drops only its own unfinished records": Case(
        {"in/a.txt": PHONE, "in/b.txt": MAIL, "all.jsonl": MINE + "\n"},
        [(["in", "--out", "out", "--spans", "all.jsonl", "--mapping", "m.jsonl", "--key_file", "k"], 0, ""),
         _lose_output("b.txt"),
         (["in", "--out", "out", "--spans", "all.jsonl", "--mapping", "m.jsonl", "--key_file", "k"], 0,
          "1 written, 1 already done, 0 failed, of 2 documents")],  # fmt: skip
        lambda root: [r.get("doc") for r in records(root / "all.jsonl")] == [None, "in/a.txt", "in/b.txt"]
        and sorted(r["doc"] for r in _opened(root)) == ["in/a.txt", "in/b.txt"],
    ),
    "records another run appended after ours stay": Case(
        {"in/a.txt": PHONE, "in/b.txt": MAIL, "other/c.txt": PHONE},
        [(["in", "--out", "out", "--spans", "all.jsonl"], 0, ""),
         _lose_output("b.txt"),
         (["other", "--out", "out2", "--spans", "all.jsonl"], 0, ""),
         (["in", "--out", "out", "--spans", "all.jsonl"], 0, "1 written, 1 already done")],  # fmt: skip
        lambda root: [r["doc"] for r in records(root / "all.jsonl")] == ["in/a.txt", "in/b.txt", "other/c.txt",
                                                                         "in/b.txt"],
    ),
    "spans and mapping are created readable by the owner only; an output takes its input's read and write bits": Case(
        {"d1.txt": PHONE, "d2.txt": PHONE},
        [lambda root, state: ((root / "d1.txt").chmod(0o750), (root / "d2.txt").chmod(0o600)),
         (["d1.txt", "d2.txt", "--spans", "s.jsonl", "--mapping", "m.jsonl", "--key_file", "k", "--out", "out"], 0, "")],
        lambda root: all((root / n).stat().st_mode & 0o777 == 0o600 for n in ("s.jsonl", "m.jsonl"))
        and [(root / "out" / n).stat().st_mode & 0o777 for n in ("d1.txt", "d2.txt")] == [0o640, 0o600],
    ),
    "with --recognizers_only, every run says what is and is not replaced": Case(
        {"d1.txt": PHONE},
        [(["d1.txt"], 0, "recognizers only, no model: only the structured identifiers"),
         (["d1.txt"], 0, "before a resident number, or in a table's column of people, or masked in part (김○○); other names")],
    ),
    "no model and no recognizers is refused": Case(
        {"d1.txt": PHONE},
        [(["d1.txt", "--recognizers", "[]", "--out", "out"], 1, "nothing would be replaced")],
        lambda root: not (root / "out").exists(),
    ),
    "resuming under other settings is refused, --overwrite redoes": Case(
        {"in/a.txt": PHONE},
        [(["in", "--out", "out"], 0, ""),
         (["in", "--out", "out", "--model", "MODEL"], 1, "made under other settings (out/a.txt: model: none -> \""),
         (["in", "--out", "out", "--mapping", "m.jsonl", "--key_file", "k"], 1, "a.txt: mapping: none -> \""),
         (["in", "--out", "out", "--operator", "tag"], 1, 'operator: "placeholder" -> "tag"'),
         (["in", "--out", "out", "--keep_officials", "[]"], 1, "keep_officials: "),  # a policy is a setting too
         (["in", "--out", "out", "--model", "MODEL", "--overwrite"], 0, "1 written"),
         (["in", "--out", "out", "--model", "MODEL", "--keep_regions", "false"], 1, "keep_regions: true -> false"),
         (["in", "--out", "out", "--operator", "tag", "--overwrite"], 0, "1 written, 0 failed")],  # fmt: skip
        lambda root: (root / "out/a.txt").read_text(encoding="utf-8") == "연락처 [전화번호]로 전화하였다.\n",
    ),
    "outputs that recorded no settings are not resumed": Case(
        {"in/a.txt": PHONE, "out/a.txt": "an output of an older Thunder"},
        [(["in", "--out", "out"], 1, "its outputs were made by a run that recorded no settings"),
         (["in", "--out", "out", "--overwrite"], 0, "1 written")],
    ),
    "each output keeps its own record: other settings never count it done (issue 71)": Case(
        {"set1/a.txt": MEETING, "set2/b.txt": PHONE},
        [(["set1", "--out", "out"], 0, ""),
         (["set2", "--out", "out", "--model", "MODEL"], 1, 'made under other settings (out/a.txt: model: none -> "'),
         (["set2", "--out", "out", "--model", "MODEL", "--overwrite"], 0, "1 written, 0 failed"),
         (["set1", "--out", "out", "--model", "MODEL"], 1, 'made under other settings (out/a.txt: model: none -> "'),
         (["set1", "--out", "out", "--recognizers", "[phone_number]"], 1, 'recognizers: none -> ["phone_number"]'),
         (["set1", "--out", "out", "--model", "MODEL", "--overwrite"], 0, "1 written, 0 failed")],  # fmt: skip
        lambda root: _made_under(root) == {"a.txt": "MODEL", "b.txt": "MODEL"},
    ),
    "a run under other settings over other inputs is refused and leaves the record": Case(
        {"in1/a.txt": PHONE, "in2/b.txt": PHONE},
        [(["in1", "--out", "out"], 0, ""),
         (["in2", "--out", "out", "--operator", "mask"], 1, 'out/a.txt: operator: "placeholder" -> "mask"'),
         (["in1", "--out", "out", "--operator", "mask"], 1, 'out/a.txt: operator: "placeholder" -> "mask"')],  # fmt: skip
        lambda root: _made_under(root) == {"a.txt": "placeholder"} and not (root / "out/b.txt").exists(),
    ),
    "an older record saying operator mask over placeholder outputs counts none of them done": Case(
        {"in/a.txt": PHONE, "out/a.txt": "연락처 A로 전화하였다.\n",
         "out/.thunder-run.json": json.dumps({"format": "thunder-run/1", "settings": {"operator": "mask"}})},
        [(["in", "--out", "out", "--operator", "mask"], 1, "recorded no settings for them (out/a.txt)"),
         (["in", "--out", "out", "--operator", "mask", "--overwrite"], 0, "1 written, 0 failed")],  # fmt: skip
        lambda root: "A로" not in (root / "out/a.txt").read_text(encoding="utf-8") and _made_under(root) == {"a.txt": "mask"},
    ),
    "--in_place through a symbolic link de-identifies the file it names": Case(
        {"real/a.txt": PHONE, "in/link.txt": Link("../real/a.txt")},
        [(["in", "--in_place"], 0, "")],
        lambda root: (root / "in/link.txt").is_symlink() and "010" not in (root / "real/a.txt").read_text(),
    ),
    "--in_place refuses a file with a second hard link (issue 71)": Case(
        {"in/a.txt": PHONE, "elsewhere/b.txt": HardLink("in/a.txt")},
        [(["in", "--in_place"], 1, "--in_place: in/a.txt has 2 hard links; the others would keep the identifiers")],
        lambda root: (root / "in/a.txt").read_text() == PHONE and (root / "elsewhere/b.txt").stat().st_nlink == 2,
    ),
    "--spans and --mapping on two links of one file are refused (issue 71)": Case(
        {"in/a.txt": PHONE, "s.jsonl": "", "m.jsonl": HardLink("s.jsonl")},
        [(["in", "--out", "out", "--spans", "s.jsonl", "--mapping", "m.jsonl", "--key_file", "k"], 1,
          "--spans s.jsonl and --mapping m.jsonl are hard links to one file")],  # fmt: skip
        lambda root: _nothing_written(root) and (root / "s.jsonl").read_text() == "",
    ),
    "--review_queue and --spans on two links of one file are refused (issue 71)": Case(
        {"in/a.txt": PHONE, "s.jsonl": "", "q.jsonl": HardLink("s.jsonl")},
        [(["in", "--out", "out", "--spans", "s.jsonl", "--review_queue", "q.jsonl"], 1,
          "--spans s.jsonl and --review_queue q.jsonl are hard links to one file")],  # fmt: skip
        lambda root: _nothing_written(root) and (root / "s.jsonl").read_text() == "",
    ),
    **{f"{option} linked to an input is refused (issue 71)": Case(
        {"in/a.txt": PHONE, "f.jsonl": HardLink("in/a.txt")},
        [(["in", "--out", "out", option, "f.jsonl", *extra], 1, f"{option} f.jsonl is a hard link to the input "
          "in/a.txt (one file)")],  # fmt: skip
        lambda root: _nothing_written(root) and not (root / "m.jsonl").exists() and (root / "in/a.txt").read_text() == PHONE,
    ) for option, extra in [("--spans", []), ("--mapping", ["--key_file", "k"]), ("--review_queue", []),
                            ("--key_file", ["--mapping", "m.jsonl"])]},  # fmt: skip
    "--spans linked to an output is refused (issue 71)": Case(
        {"in/a.txt": PHONE, "out/a.txt": "연락처 A로 전화하였다.\n", "s.jsonl": HardLink("out/a.txt")},
        [(["in", "--out", "out", "--spans", "s.jsonl"], 1, "--spans s.jsonl is a hard link to the output out/a.txt")],
        lambda root: (root / "out/a.txt").read_text() == "연락처 A로 전화하였다.\n" and not (root / "k").exists(),
    ),
    "an output linked to an input is refused (issue 71)": Case(
        {"in/d.jsonl": '{"id": "x", "text": "010-1234-5678"}\n', "out/d.jsonl": HardLink("in/d.jsonl")},
        [(["in", "--out", "out", "--overwrite"], 1, "its output out/d.jsonl is a hard link to the input in/d.jsonl")],
        lambda root: (root / "in/d.jsonl").read_text() == '{"id": "x", "text": "010-1234-5678"}\n',
    ),
    "two outputs that are one file are refused (issue 71)": Case(
        {"in/a.txt": PHONE, "in/b.txt": MAIL, "out/a.txt": "A", "out/b.txt": HardLink("out/a.txt")},
        [(["in", "--out", "out", "--overwrite"], 1, "the outputs out/a.txt and out/b.txt are hard links to one file")],
        lambda root: (root / "out/b.txt").read_text() == "A",
    ),
    "skipped inputs are named with their reason": Case(
        {"in/a.txt": PHONE, "in/.hidden.txt": PHONE, "other/b.txt": PHONE, "in/linked": Link("../other"),
         "in/loop.txt": Link("loop.txt"), "in/dead.txt": Link("nowhere.txt")},  # fmt: skip
        [(["in", "--out", "out"], 0, "in: skipped 1 hidden file(s): .hidden.txt"),
         (["in", "--out", "out"], 0, "in/linked: skipped, a link to a directory (links to directories are not followed)"),
         (["in", "--out", "out"], 0, "in/loop.txt: skipped, a link that loops"),
         (["in", "--out", "out"], 0, "in/dead.txt: skipped, a link to nothing")],  # fmt: skip
    ),
    "one run at a time per --out; a killed run's lock is recovered and its work resumed": Case(
        {},
        [_hold_the_lock,
         (["many", "--out", "out", "--spans", "spans.jsonl"], 1, "out is locked by a run in progress (thunder deid, process"),
         _kill_9,
         (["many", "--out", "out", "--spans", "spans.jsonl"], 0, "already done, 0 failed, of 400 documents")],  # fmt: skip
        lambda root: len(list((root / "out").glob("*.txt"))) == 400
        and sorted(r["doc"] for r in records(root / "spans.jsonl")) == [f"many/{i:03d}.txt" for i in range(400) for _ in range(20)],
    ),
}


def _nothing_written(root: Path) -> bool:
    """No output, key or review queue journal was written into the case's folder."""
    return not any((root / name).exists() for name in ("out", "k", "q.jsonl.partial"))


def _made_under(root: Path) -> dict[str, str]:
    """Each output of ``out/`` and what its record says made it: ``MODEL`` (a model), else the operator."""
    record = json.loads((root / "out/.thunder-run.json").read_text(encoding="utf-8"))
    made = {name: record["made_under"][key] for name, key in record["outputs"].items() if (root / "out" / name).exists()}
    return {name: "MODEL" if settings["model"] else settings["operator"] for name, settings in made.items()}


def _opened(root: Path) -> list[dict]:
    from thunder.deid.mapping import Mapping, MappingKey

    return [record for found in Mapping(root / "m.jsonl", MappingKey.load(root / "k")).records.values() for record in found]


@pytest.mark.parametrize("name", list(OUTPUT_CASES))
def test_output_files_fail_closed(name: str, tmp_path: Path, monkeypatch, capsys, export: Path) -> None:
    case = OUTPUT_CASES[name]
    for path, content in case.files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            (tmp_path / path).symlink_to(content.target)
        elif isinstance(content, HardLink):
            os.link(tmp_path / content.target, tmp_path / path)
        else:
            (tmp_path / path).write_text(content, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    state: dict = {}
    try:
        for step in case.steps:
            if callable(step):
                step(tmp_path, state)
                continue
            args, expected_code, fragment = step
            code, message = deid(*(str(export) if arg == "MODEL" else arg for arg in args))
            err = message + capsys.readouterr().err
            assert (code, fragment in err) == (expected_code, True), err
    finally:
        if "run" in state and state["run"].poll() is None:
            state["run"].kill()
    assert case.holds(tmp_path)


# ----------------------------------------------------------------------------------------------- issue 30: variants,
# artefacts that lie, one line instead of a traceback (keep these rows together)

REPO = Path(__file__).resolve().parents[1]
# every line of the block, with the identifiers it holds as written
VARIANT_LINES = [
    ("전화 ０１０－１２３４－５６７８", ["０１０－１２３４－５６７８"]),
    ("전화 010–1234–5678 / 010‐1234‐5678 / 010−1234−5678", ["010–1234–5678", "010‐1234‐5678", "010−1234−5678"]),
    ("전화 (010)1234-5678 / +82 10 1234 5678 / 010-12\u200b34-5678 / 010 1234 5678",
     ["(010)1234-5678", "+82 10 1234 5678", "010-12\u200b34-5678", "010 1234 5678"]),
    ("주민등록번호 900101.1234568 / ９００１０１－１２３４５６８ / 900101-*******",
     ["900101.1234568", "９００１０１－１２３４５６８", "900101-*******"]),
    ("번호는 9001011234560 이다.", ["9001011234560"]),
    ("사업자등록번호 1234567890", ["1234567890"]),
    ("여권번호 m12345678 / M 12345678; 계좌 110 123 456789; hong @ example.com; blog.naver.com/hong1234; 192.168.10.20",
     ["m12345678", "M 12345678", "110 123 456789", "hong @ example.com", "blog.naver.com/hong1234", "192.168.10.20"]),
    # issue 71: a dash typed as ㅡ, ー or ~, a <br> or two line breaks inside a number, an address wrapped after a dot
    ("전화 010ㅡ1234ㅡ5678 / ０１０ー１２３４ー５６７８ / 010~1234~5678, 주민등록번호 900101ㅡ1234568",
     ["010ㅡ1234ㅡ5678", "０１０ー１２３４ー５６７８", "010~1234~5678", "900101ㅡ1234568", "1234ㅡ5678", "1234568"]),
    ("전화 010-1234-<br>5678 또는 010-1234-\n\n5678, 이메일 hong@naver.\ncom",
     ["010-1234-<br>5678", "010-1234-\n\n5678", "5678", "hong@naver.\ncom", "hong@"]),
    # ... a URL's user name and password, ftp, a short link, a punycode host without a scheme
    ("https://hongkd:pa55w0rd@example.com/x ftp://files.example.com/a.zip bit.ly/3xYzAb xn--9n2bp8q.xn--3e0b707e",
     ["hongkd", "pa55w0rd", "ftp://files.example.com/a.zip", "bit.ly/3xYzAb", "xn--9n2bp8q.xn--3e0b707e"]),
    # ... a Hangul e-mail address, the @ and the dots written in Hangul (hong 골뱅이 naver 닷컴)
    ("이메일 홍길동@예시.한국 / hong 골뱅이 naver 닷컴 / kim 골뱅이 daum 닷 컴 / lee 앳 gmail 점 com",
     ["홍길동", "예시.한국", "hong", "naver", "kim", "daum", "lee", "gmail"]),
    # ... a mobile number read out in Sino-Korean numerals, IPv6, letters glued to a number (kd12 known elsewhere)
    ("전화 공일공 일이삼사 오육칠팔, 공일공-일이삼사-오육칠팔, 영일영 일이삼사 오육칠팔",
     ["공일공 일이삼사 오육칠팔", "공일공-일이삼사-오육칠팔", "영일영 일이삼사 오육칠팔", "일이삼사", "오육칠팔"]),
    ("접속 IP 2001:db8::8a2e:370:7334, 아이디 kd12, 전화 010-1234-0001kd12",
     ["2001:db8::8a2e:370:7334", "8a2e", "kd12", "0001"]),
]  # fmt: skip


@pytest.mark.parametrize("with_model", [False, True], ids=["recognizers", "model"])
def test_identifier_variants_are_replaced(tmp_path: Path, export: Path, with_model: bool) -> None:
    from thunder.identifiers.normalize import normal_view

    lines = "".join(json.dumps({"id": str(i), "text": line}, ensure_ascii=False) + "\n"
                    for i, (line, _) in enumerate(VARIANT_LINES))  # fmt: skip
    source = _tree(tmp_path, {"in.jsonl": lines}) / "in.jsonl"
    model = ["--model", str(export)] if with_model else []
    assert deid(str(source), "--out", str(tmp_path / "out"), *model) == (0, "")
    outputs = [json.loads(line)["text"] for line in (tmp_path / "out" / "in.jsonl").read_text().splitlines()]
    for (line, identifiers), output in zip(VARIANT_LINES, outputs):
        for identifier in identifiers:
            assert identifier not in output and normal_view(identifier).text not in normal_view(output).text, output


def test_a_text_holding_a_masked_form_is_masked_too(tmp_path: Path, monkeypatch, capsys) -> None:
    import io

    text = "주민번호 900101-1******, 메모 900101-1 010-1234-5678\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    assert deid("--operator", "mask") == (0, "")
    output = capsys.readouterr().out
    assert "900101-1******" not in output and "010-1234-5678" not in output and output.startswith("주민번호 ")


def _demo_sized_export(tmp_path: Path) -> Path:
    """An export whose embeddings fit the demo tokenizer (2,002 tokens), as the issue's demo model."""
    from helpers import build_tiny_model

    from thunder.data import DEMO_TOKENIZER
    from thunder.language.tokenizer import ThunderTokenizer
    from thunder.model.export import write_export

    tokenizer, label_set = ThunderTokenizer.from_pretrained(DEMO_TOKENIZER), LabelSet(Taxonomy.load(), "label", "IO")
    return write_export(tmp_path / "demo", build_tiny_model(tokenizer, label_set), tokenizer, label_set,
                        "token-classification")  # fmt: skip


def test_a_swapped_tokenizer_with_a_rewritten_fingerprint_is_refused(tmp_path: Path) -> None:
    from thunder.model.loader import tokenizer_fingerprint

    broken = _demo_sized_export(tmp_path)
    Artefact.open(broken).classifier()  # as written it loads
    other = _other_tokenizer()
    other.save_pretrained(broken)
    info = json.loads((broken / "thunder.json").read_text(encoding="utf-8"))
    info["tokenizer"] = tokenizer_fingerprint(other)  # the lie: thunder.json now describes the swapped tokenizer
    (broken / "thunder.json").write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ArtefactError, match=r"tokens but the model's embeddings 2002: not the tokenizer"):
        Artefact.open(broken).classifier()


@pytest.mark.parametrize("kind", ["parent", "absolute", "link"])
def test_weights_are_read_only_from_inside_the_model_directory(tmp_path: Path, export: Path, kind: str) -> None:
    broken = _copy(export, tmp_path)
    from safetensors.torch import load_file

    outside = tmp_path / "outside.safetensors"
    (broken / "model.safetensors").rename(outside)
    name = {"parent": "../outside.safetensors", "absolute": str(outside), "link": "model-00001.safetensors"}[kind]
    if kind == "link":
        (broken / name).symlink_to(outside)
    index = {"metadata": {}, "weight_map": {key: name for key in load_file(outside)}}
    (broken / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    message = "leads out of the model directory" if kind == "link" else "refusing the stored file name"
    with pytest.raises(ArtefactError, match=message):
        Artefact.open(broken).classifier()
    code, error = deid("--model", str(broken), str(_tree(tmp_path, {"a.txt": PHONE}) / "a.txt"))
    assert code == 1 and message in error and "\n" not in error


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--operators", "{bad", "--operators: invalid JSON (Expecting property name enclosed in double quotes"),
        ("--threshold", "nan", "--threshold: not a number: 'nan'"),
        ("--threshold", ".nan", "threshold is not a number: nan"),
        ("--device", "nosuch", "device 'nosuch' cannot be used here"),
        pytest.param("--device", "cuda", "device 'cuda' cannot be used here",
                     marks=pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")),
    ],
)  # fmt: skip
@pytest.mark.parametrize("with_model", [False, True], ids=["recognizers", "model"])
def test_bad_option_values_are_one_line(tmp_path: Path, export: Path, option, value, message, with_model) -> None:
    source = _tree(tmp_path, {"a.txt": PHONE}) / "a.txt"
    model = ["--model", str(export)] if with_model else []
    code, error = deid(str(source), "--out", str(tmp_path / "out"), *model, option, value)
    assert code == 1 and error.startswith("thunder deid: error:") and message in error and "\n" not in error
    assert not (tmp_path / "out").exists()


def test_reidentify_refuses_a_record_whose_ciphertext_is_a_number(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(_tree(tmp_path, {"a.txt": PHONE}))
    assert deid("a.txt", "--out", "out", "--mapping", "m.jsonl", "--key_file", "k.key") == (0, "")
    record = json.loads(Path("m.jsonl").read_text())
    Path("m.jsonl").write_text(json.dumps({**record, "ciphertext": 12345}) + "\n")
    with pytest.raises(SystemExit) as exit:
        main(["reidentify", "--mapping", "m.jsonl", "--key_file", "k.key", "out/a.txt"])
    assert str(exit.value.code) == "thunder reidentify: error: m.jsonl:1: authentication failed: the record was " \
                                   "altered or damaged"  # fmt: skip


def test_validate_refuses_a_pickled_ckpt_path_in_one_line(tmp_path: Path, capsys) -> None:
    marker, evil = tmp_path / "pwned", tmp_path / "evil.ckpt"
    torch.save({"state_dict": {}, "x": Payload(marker)}, evil)
    with pytest.raises(SystemExit) as exit:
        main(["validate", "--config", str(REPO / "configs" / "demo.yaml"), "--ckpt_path", str(evil)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and not marker.exists() and "Traceback" not in err
    assert err.startswith(f"thunder validate: error: {evil}: not a loadable checkpoint of tensors and plain data")


def test_documents_of_any_size_reach_mecab_in_parts(tmp_path: Path, export: Path, monkeypatch) -> None:
    """Mecab refuses a text of some megabytes ("too long sentence"): every call gets at most MECAB_CHARS."""
    import thunder.language.morphemes as morphemes

    monkeypatch.setattr(morphemes, "MECAB_CHARS", 500)
    real, sizes = morphemes._tagger(), []

    class Refusing:  # Mecab with a limit of MECAB_CHARS characters
        def parse(self, text: str) -> str | None:
            sizes.append(len(text))
            return real.parse(text) if len(text) <= 500 else None

        def what(self) -> str:
            return "too long sentence."

    monkeypatch.setattr(morphemes, "_tagger", Refusing)
    text = (FILLER_LINE * 40 + "연락처 010-1234-5678로 전화하였다.\n") * 3 + " " * 70_000 + "끝."
    source = _tree(tmp_path, {"big.txt": text}) / "big.txt"
    assert deid("--model", str(export), str(source), "--out", str(tmp_path / "out")) == (0, "")
    output = (tmp_path / "out" / "big.txt").read_text(encoding="utf-8")
    assert max(sizes) <= 500 and len(sizes) > 10
    assert "010-1234-5678" not in output and " " * 70_000 in output


FILLER_LINE = "피고인은 2021. 3. 4. 서울중앙지방법원에서 재판을 받았다. "


@pytest.mark.slow
def test_a_document_mecab_refuses_whole_is_tokenized_in_parts() -> None:
    from thunder.language.morphemes import _tagger, morpheme_pieces

    text = (FILLER_LINE * 20 + "\n") * 25_000  # about 17 MB: more than one Mecab call takes
    assert _tagger().parse(text) is None and "too long sentence" in _tagger().what()
    pieces = morpheme_pieces(text)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(text) and all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))


# ----------------------------------------------------------------------------------------------- issue 71: names


HIDDEN = re.compile(r"doc-[0-9a-f]{20}")


@pytest.mark.parametrize("with_model", [False, True], ids=["recognizers", "model"])
def test_names_and_ids_that_hold_identifiers_are_named_by_digest_unless_kept(tmp_path: Path, export: Path,
                                                                            with_model: bool, capsys) -> None:  # fmt: skip
    """Class: names are data (issues 71, 80). A JSONL id, file or folder name in which the recognizers find an
    identifier, or that holds a text replaced in its own document, is replaced whole by its input's digest (never
    partly: ``홍길동_A.txt`` kept the name); two such inputs never share an output; a re-run finds them done;
    ``--keep_names`` keeps them, and the run record says which."""
    ids = ["2020고단1234_홍길동_900101-1234567", "2020고단1234_홍길동_900101-1234568", "plain"]
    lines = "".join(json.dumps({"id": i, "text": "전화 010-1111-2222"}, ensure_ascii=False) + "\n" for i in ids)
    named_in_text = "피고인 홍길동은 010-2222-3333으로 전화하였다.\n"
    source = _tree(tmp_path / "in", {"2020고단1234_홍길동_010-1234-5678.txt": PHONE, "hong@naver.com/a.txt": PHONE,
                                     "cases.jsonl": lines, "홍길동.txt": named_in_text,
                                     "2020고단5678.txt": PHONE})  # fmt: skip
    model = ["--model", str(export)] if with_model else []
    out = tmp_path / "out"
    assert deid(str(source), "--out", str(out), *model) == (0, "")
    assert "outputs named by their inputs' digests" in capsys.readouterr().err
    names = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    written = [json.loads(line)["id"] for line in (out / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    leaks = ("010-1234-5678", "900101-123456", "hong@naver.com", "홍길동")
    assert not any(leak in name for leak in leaks for name in names + written), (names, written)
    assert "2020고단5678.txt" in names and "cases.jsonl" in names  # clean names stay
    hidden = [n for n in names if HIDDEN.fullmatch(n.removesuffix(".txt"))]
    assert len(hidden) == 3 and len(names) == 5  # the phone, the e-mail folder, the name its text replaced
    assert written[2] == "plain" and all(HIDDEN.fullmatch(i) for i in written[:2]) and written[0] != written[1]
    assert '"keep_names": false' in (out / ".thunder-run.json").read_text()
    assert deid(str(source), "--out", str(out), *model) == (0, "")  # resumed: every document found done
    assert "0 written, 7 already done" in capsys.readouterr().err  # four text files, the JSONL's three
    again = tmp_path / "again"
    assert deid(str(source), "--out", str(again), *model) == (0, "")  # the same digests from run to run
    assert sorted(str(p.relative_to(again)) for p in again.rglob("*") if not p.name.startswith(".")) == names
    kept = tmp_path / "kept"
    assert deid(str(source), "--out", str(kept), "--keep_names", *model) == (0, "")
    assert (kept / "2020고단1234_홍길동_010-1234-5678.txt").is_file() and (kept / "hong@naver.com/a.txt").is_file()
    assert [json.loads(line)["id"] for line in (kept / "cases.jsonl").read_text(encoding="utf-8").splitlines()] == ids
    assert '"keep_names": true' in (kept / ".thunder-run.json").read_text()


def test_the_digest_is_of_the_document_not_of_its_name(tmp_path: Path) -> None:
    """A hidden name cannot be found by trying names: the same name over another document gets another digest."""
    first = _tree(tmp_path / "a", {"홍길동_800101-1234567.txt": PHONE})
    second = _tree(tmp_path / "b", {"홍길동_800101-1234567.txt": PHONE + PHONE})
    outputs = []
    for source in (first, second):
        out = tmp_path / f"out-{source.name}"
        assert deid(str(source), "--out", str(out)) == (0, "")
        outputs += [p.name for p in out.iterdir() if not p.name.startswith(".")]
    assert len(outputs) == 2 and outputs[0] != outputs[1] and all(HIDDEN.fullmatch(o[:-4]) for o in outputs)


def test_the_spans_file_and_queue_never_name_the_input_folder_or_a_hidden_input(tmp_path: Path, capsys) -> None:
    """Class: names are data, every surface. The spans file's ``doc`` and the queue's ``id`` never hold the folder a
    file was read from when its name identifies (``case-800101-1234567/``), under ``--in_place`` and
    ``--no_span_text`` too; a failure line names a hidden input by its digest; control characters in a name are
    escaped, so an error line stays one line."""
    source = _tree(tmp_path / "case-800101-1234567", {"a.txt": PHONE, "홍길동_010-9999-8888.txt": PHONE})
    spans, queue = tmp_path / "s.jsonl", tmp_path / "q.jsonl"
    assert deid(str(source), "--out", str(tmp_path / "out"), "--spans", str(spans), "--review_queue", str(queue),
                "--no_span_text") == (0, "")  # fmt: skip
    for path in (spans, queue):
        text = path.read_text(encoding="utf-8")
        assert "800101" not in text and "홍길동" not in text and "9999" not in text, text
    assert all(HIDDEN.fullmatch(r["doc"].removesuffix(".txt")) for r in records(spans))
    in_place = _tree(tmp_path / "case-900101-1234567", {"b.txt": PHONE, "홍길동_010-7777-6666.txt": PHONE})
    assert deid(str(in_place), "--in_place", "--spans", str(tmp_path / "s2.jsonl"), "--no_span_text") == (0, "")
    text = (tmp_path / "s2.jsonl").read_text(encoding="utf-8")
    assert "900101" not in text and "홍길동" not in text and "7777" not in text, text
    assert (in_place / "홍길동_010-7777-6666.txt").read_text(encoding="utf-8") != PHONE  # written over itself
    broken = _tree(tmp_path / "broken", {"홍길동_010-5555-4444.txt": "", "x\ny: 1 written, 0 failed.txt": ""})
    (broken / "홍길동_010-5555-4444.txt").write_bytes(b"\xff\xfe\xfa")
    (broken / "x\ny: 1 written, 0 failed.txt").write_bytes(b"\xff\xfe\xfa")
    capsys.readouterr()
    code, _ = deid(str(broken), "--out", str(tmp_path / "out-broken"))
    err = capsys.readouterr().err
    assert code == 1 and "5555" not in err and "홍길동" not in err, err
    assert not any(line.startswith("y: ") for line in err.splitlines()) and "x\\ny" in err, err



# ------------------------------------------------------------------------------------ issue 71: text as written


COMPOSED = "피고인 김철수는 2020. 3. 1. 서울에서 010-1234-5678로 홍길동을 만났다.\n"


def _decomposed(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFD", text)


def _tagging(tokenizer, text: str, *words: str) -> tuple[KeywordModel, LabelSet]:
    """A model that tags the tokens of ``words`` (as ``text`` reads) as person names, and its label set."""
    label_set = LabelSet(Taxonomy.load(), "label", "IO")
    encoding = tokenizer.encode(text)
    places = [(text.index(word), text.index(word) + len(word)) for word in words]
    tagged = {token for token, (a, b) in zip(encoding.ids, encoding.offsets)
              if any(start <= a and b <= end for start, end in places)}  # fmt: skip
    return KeywordModel(tokenizer.vocab_size, len(label_set), tagged, label_set.inside_id("내국인이름")), label_set


@pytest.mark.parametrize("written", ["decomposed", "mixed"])
@pytest.mark.parametrize("with_model", [False, True], ids=["recognizers", "model"])
def test_a_decomposed_text_is_read_composed_and_written_in_its_own_form(tokenizer, written: str,
                                                                        with_model: bool) -> None:  # fmt: skip
    """NFD text (issue 71: nothing found without a model, the whole line one span with one) is read composed by the
    recognizers, Mecab-ko and the model; its spans are its own characters and the output keeps its form: decomposed
    where it was, composed where it was."""
    import unicodedata

    model, label_set = _tagging(tokenizer, COMPOSED, "홍길동") if with_model else (None, None)
    deidentifier = Deidentifier(model, tokenizer if with_model else None, label_set)
    as_composed = deidentifier(COMPOSED)
    found = {span.text for span in as_composed.spans}
    assert {"김철수", "010-1234-5678"} | ({"홍길동"} if with_model else set()) <= found
    text = _decomposed(COMPOSED) if written == "decomposed" else COMPOSED + _decomposed(COMPOSED)
    result = deidentifier(text)
    expected = as_composed.text if written == "decomposed" else as_composed.text + as_composed.text
    assert unicodedata.normalize("NFC", result.text) == expected
    lines = result.text.splitlines(keepends=True)
    assert lines[-1] == _decomposed(as_composed.text)  # written decomposed, the particle fixed (A는) too
    if written == "mixed":
        assert lines[0] == as_composed.text
    assert all(text[span.start : span.end] == span.text for span in result.spans)
    assert [unicodedata.normalize("NFC", span.text) for span in result.spans][-len(as_composed.spans) :] == [
        span.text for span in as_composed.spans
    ]
    if with_model:  # the windows thunder predict batches read the composed text too
        windows = deidentifier.windows([_decomposed(COMPOSED)])
        assert [w.ids for w in windows] == [w.ids for w in deidentifier.windows([COMPOSED])]


def test_a_decomposed_file_is_written_decomposed(tmp_path: Path) -> None:
    import unicodedata

    source = _tree(tmp_path, {"a.txt": _decomposed(COMPOSED)}) / "a.txt"
    spans = tmp_path / "spans.jsonl"
    assert deid(str(source), "--out", str(tmp_path / "out"), "--spans", str(spans)) == (0, "")
    output = (tmp_path / "out" / "a.txt").read_text(encoding="utf-8")
    assert output == _decomposed("피고인 A는 2020. 3. 1. 서울에서 B로 홍길동을 만났다.\n")
    assert [unicodedata.normalize("NFC", r["text"]) for r in records(spans)] == ["김철수", "010-1234-5678"]


def _model_spans(text: str, *pieces: str) -> list:
    """Model spans (name label) over the ``pieces`` of ``text``, each the first occurrence from the previous one's
    start on."""
    from thunder.deid.recognizers.registry import ScoredSpan

    spans, position = [], 0
    for piece in pieces:
        start = text.index(piece, position)
        spans.append(ScoredSpan(start, start + len(piece), "내국인이름", 0.99, "model"))
        position = start
    return spans


@pytest.mark.parametrize(
    ("text", "model_spans", "expected"),
    [
        # issue 71: the model's span over 김철수</td><td> ran into the phone's: "<td>L"
        ("<td>김철수</td><td>010-1234-5678</td>", ["김철수</td><td>"], "<td>A</td><td>B</td>"),
        # a model span across a markdown cell separator: "| M |"
        ("| 이름 | 전화 |\n| 홍길동 | 010-1234-5678 |", ["홍길동 | 010-1234-5678"], "| 이름 | 전화 |\n| A | B |"),
        # the tag after a name: "A>B>는"; the particle after the closing tag agrees with the replacement
        ("<b>김철수</b>는 왔다", ["김철수</"], "<b>A</b>는 왔다"),
        ("<b>홍길동</b>은 왔다", ["홍길동</b>"], "<b>A</b>는 왔다"),
        # a span inside one tag (an attribute's value) stays whole; one across the tag's end loses the tag
        ('<a title="김철수">김철수</a>', ["김철수", '김철수">김철수'], '<a title="A">A</a>'),
        # a recognizer's span across a <br> inside a number: both pieces replaced, the <br> kept
        ("<td>010-1234-<br>5678</td>", [], "<td>A<br>B</td>"),
        ("<p>홍길동</p><p>김철수</p>", ["홍길동</p><p>김철수"], "<p>A</p><p>B</p>"),
        # a character reference is markup too: "<td>A010-…" or "A;" would break the page
        ("<td>김철수&nbsp;010-1234-5678</td>", ["김철수&nbsp;"], "<td>A&nbsp;B</td>"),
        ("<td>홍길동&amp;김철수</td>", ["홍길동&amp;김철수"], "<td>A&amp;B</td>"),
        ("홍길동&#160;김철수", ["홍길동&#160"], "A&#160;김철수"),
        # an annotated judgment's tags (thunder deid on a shipped .md): "<<<구A구B" before
        ("피고인 <<<내국인이름>>>홍길동<<</내국인이름>>>은 <<<구아래주소>>>C<<</구아래주소>>>에 산다",
         ["이름>>>홍길동<<</내국", "아래주소>>>C<<</", "아래주소"],  # a label's name is no text: kept
         "피고인 <<<내국인이름>>>A<<</내국인이름>>>는 <<<구아래주소>>>B<<</구아래주소>>>에 산다"),
    ],
)
def test_no_replacement_eats_markup(text: str, model_spans: list[str], expected: str, monkeypatch) -> None:
    from thunder.language.markup import MARKUP
    from thunder.model.decoding import TokenPredictions

    deidentifier = Deidentifier()  # the recognizers, and a model whose spans the case gives
    monkeypatch.setattr(deidentifier, "model_spans", lambda read, prediction: _model_spans(read, *model_spans))
    result = deidentifier.finish(text, TokenPredictions([]))
    assert result.text == expected
    def tags(written: str) -> list[str]:  # the markup, attribute values aside (they are text, de-identified)
        return [re.sub(r'="[^"]*"', "=", markup) for markup in MARKUP.findall(written)]

    assert tags(result.text) == tags(text)
    assert not any(MARKUP.search(span.text) for span in result.spans)


@pytest.mark.parametrize(
    ("text", "tagged", "expected"),
    [
        # issue 71: a form's particle for either ending stays as written ("A(피해자)가(가)" before)
        ("피고인 홍길동(피해자)이(가) 왔다.", None, "피고인 A(피해자)이(가) 왔다."),
        ("피고인 홍길동이(가) 왔다.", None, "피고인 A이(가) 왔다."),
        ("피고인 홍길동은(는) 갔다.", None, "피고인 A은(는) 갔다."),
        ("피고인 김철수(이)가 왔다.", None, "피고인 A(이)가 왔다."),
        ("증인 김철수(으)로부터 들었다.", None, "증인 A(으)로부터 들었다."),
        # the vocative and 랑 kept and fixed, found without a model or tagged by one ("A,", "A 만났다" before)
        ("피고인 홍길동아, 이리 와라.", None, "피고인 A야, 이리 와라."),
        ("피고인 홍길동아, 이리 와라.", "홍길동아", "피고인 A야, 이리 와라."),
        ("피고인은 김영희랑 만났다.", "김영희랑", "피고인은 A랑 만났다."),
        # a name's own last syllable stays the name's: 김하랑, 박선아 (two syllables would remain)
        ("피고인은 김하랑 만났다.", "김하랑", "피고인은 A 만났다."),
        ("피고인은 박선아, 최민수와 만났다.", "박선아", "피고인은 A, 최민수와 만났다."),
    ],
)
def test_particles_after_a_replacement_are_kept_as_written_or_fixed(tokenizer, text: str, tagged: str | None,
                                                                    expected: str) -> None:  # fmt: skip
    if tagged is None:
        deidentifier = Deidentifier()  # the recognizers (a name right after its role word)
    else:
        model, label_set = _tagging(tokenizer, text, tagged)
        deidentifier = Deidentifier(model, tokenizer, label_set, recognizers=[])
    assert deidentifier(text).text == expected


def test_the_spans_file_and_review_queue_name_documents_as_the_outputs_do(tmp_path: Path, capsys) -> None:
    """Ids and file names hidden in the outputs are hidden in the spans file and the review queue too (issue 71:
    they kept the originals); the encrypted mapping keeps the originals for ``reidentify``, a re-run keeps one
    record per document, and ``--keep_names`` keeps the inputs' own everywhere."""
    lines = json.dumps({"id": "2020고단1234_900101-1234568", "text": PHONE}, ensure_ascii=False) + "\n"
    source = _tree(tmp_path / "in", {"2020고단1234_홍길동_010-1234-5678.txt": PHONE, "cases.jsonl": lines})
    spans, queue, mapping, key = (tmp_path / name for name in ("s.jsonl", "q.jsonl", "m.jsonl", "k.key"))
    args = [str(source), "--spans", str(spans), "--review_queue", str(queue), "--mapping", str(mapping),
            "--key_file", str(key)]  # fmt: skip
    out = tmp_path / "out"
    assert deid(*args, "--out", str(out)) == (0, "")
    (hidden,) = [p.name for p in out.iterdir() if not p.name.startswith(".") and p.name != "cases.jsonl"]
    assert HIDDEN.fullmatch(hidden.removesuffix(".txt"))
    (written,) = [json.loads(line)["id"] for line in (out / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    assert HIDDEN.fullmatch(written)
    expected = {(hidden, hidden), ("cases.jsonl", written)}
    assert {(r["file"], r["doc"]) for r in records(spans)} == expected
    assert {(r["file"], r["id"]) for r in records(queue)} == expected
    restored = tmp_path / "restored"
    main(["reidentify", "--mapping", str(mapping), "--key_file", str(key), str(out / hidden), "--out", str(restored)])
    assert next(restored.rglob("*.txt")).read_text(encoding="utf-8") == PHONE
    for again in ([], ["--overwrite"]):  # resumed, or done again: one record per document
        assert deid(*args, "--out", str(out), *again) == (0, "")
        assert len(records(spans)) == 2 and len(records(queue)) == 2
    capsys.readouterr()
    kept = tmp_path / "kept"
    kept_args = [str(source), "--spans", str(tmp_path / "ks.jsonl"), "--review_queue", str(tmp_path / "kq.jsonl")]
    assert deid(*kept_args, "--out", str(kept), "--keep_names") == (0, "")
    originals = {("2020고단1234_홍길동_010-1234-5678.txt", str(source / "2020고단1234_홍길동_010-1234-5678.txt")),
                 ("cases.jsonl", "2020고단1234_900101-1234568")}  # fmt: skip
    assert {(r["file"], r["doc"]) for r in records(tmp_path / "ks.jsonl")} == originals
    assert {(r["file"], r["id"]) for r in records(tmp_path / "kq.jsonl")} == originals
