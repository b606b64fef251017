"""Pretrained backbones with their own tokenizers (issue 70): a BERT (WordPiece) and a DeBERTa-v2 (SentencePiece
Unigram) encoder with random weights, written here as the hub publishes them (``tools/random_backbone.py``), read
behind the Mecab-ko step (no token crosses a morpheme), trained, exported, de-identified and evaluated; hub names read
only from the local cache; a model's own code never run, weights only as tensors."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from helpers import RepeatedBatch, token_batch, trainer
from safetensors.torch import load_file
from tokenizers import Tokenizer, models, pre_tokenizers
from torch.utils.data import DataLoader
from transformers import BertTokenizer, DebertaV2Tokenizer

from thunder.cli import main
from thunder.data.mlm import MLMDataset, PackingCollator
from thunder.deid.pipeline import Deidentifier
from thunder.language.morphemes import morpheme_pieces
from thunder.language.pretrained_tokenizer import PRETRAINED_FORMAT, PretrainedTokenizer
from thunder.language.release_tokenizer import load_tokenizer
from thunder.model.backbones import backbone_directory
from thunder.model.loader import Artefact, ArtefactError, tokenizer_fingerprint
from thunder.model.modules import MaskedLM, TokenClassifier

REPO = Path(__file__).resolve().parents[2]
TINY_CONFIG = str(REPO / "configs" / "pretrained" / "tiny-bert.yaml")
_SPEC = importlib.util.spec_from_file_location("random_backbone", REPO / "tools" / "random_backbone.py")
assert _SPEC is not None and _SPEC.loader is not None
random_backbone = importlib.util.module_from_spec(_SPEC)
sys.modules["random_backbone"] = random_backbone  # dataclasses resolve the module by name
_SPEC.loader.exec_module(random_backbone)

pytestmark = pytest.mark.usefixtures("one_thread")
TEXT = "피고인 홍길동이 2021. 3. 4. 피해자 김철수에게 전화(010-2345-6789)하였고,\n\n  서울중앙지방법원에서 판결을 받았다."


@pytest.fixture(scope="module")
def demo_texts() -> list[str]:
    return random_backbone.demo_texts()


@pytest.fixture(scope="module", params=["tiny-bert", "tiny-deberta"])
def backbone(request, tmp_path_factory, demo_texts) -> Path:
    """A random-weight pretrained encoder directory: BERT with WordPiece, DeBERTa-v2 with SentencePiece Unigram."""
    return random_backbone.build(request.param, tmp_path_factory.mktemp(request.param) / "model", demo_texts)


# ----------------------------------------------------------------------------------------------- the tokenizer


def saved(hf, directory: Path) -> Path:
    hf.save_pretrained(directory)
    return directory


def test_a_particle_never_shares_a_token_with_the_word_before_it(tmp_path) -> None:
    """Tokenizers whose vocabulary holds the whole word ``홍길동이``: their own splitting gives one token; behind the
    Mecab step (``홍|길동|이``) the name's pieces and ``이`` are tokens of their own, each piece after the first
    encoded as the rest of a word (``##``, no ``▁``)."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = [*specials, "홍길동이", "홍", "길동", "##길동", "이", "##이"]
    words = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    pieces = Tokenizer(models.Unigram([(t, 0.0) for t in specials] + [("▁홍길동이", -1.0), ("▁홍", -2.0), ("길동", -2.0),
                                      ("▁길동", -2.0), ("이", -3.0), ("▁이", -2.5), ("▁", -9.0)], unk_id=1))  # fmt: skip
    pieces.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    built = {
        "wordpiece": BertTokenizer(tokenizer_object=words, do_lower_case=False, strip_accents=False),
        "unigram": DebertaV2Tokenizer(tokenizer_object=pieces, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                      sep_token="[SEP]", mask_token="[MASK]"),
    }  # fmt: skip
    expected = {"wordpiece": ["홍", "##길동", "##이"], "unigram": ["▁홍", "길동", "이"]}
    for kind, hf in built.items():
        tokenizer = load_tokenizer(saved(hf, tmp_path / kind))
        assert isinstance(tokenizer, PretrainedTokenizer)
        assert len(hf("홍길동이", add_special_tokens=False)["input_ids"]) == 1, kind  # its own splitting merges them
        encoding = tokenizer.encode("홍길동이")
        assert tokenizer.hf.convert_ids_to_tokens(encoding.ids) == expected[kind]
        assert encoding.offsets == encoding.morphemes == [(0, 1), (1, 3), (3, 4)]


def test_no_token_crosses_a_morpheme_and_words_continue_as_the_model_read_them(backbone, demo_texts) -> None:
    """On the demo judgments: every token lies inside one Mecab-ko piece; the tokens decode to what the tokenizer's
    own splitting decodes to (WordPiece ``##`` continuations, no extra ``▁``: words are not cut by spaces); a document
    encodes alike alone and in a batch, and ``encode_ids`` gives the same ids."""
    tokenizer = load_tokenizer(backbone)
    texts = [TEXT, *demo_texts[:40]]
    encodings = tokenizer.encode_batch(texts)
    for text, encoding in zip(texts, encodings):
        piece_of = {}
        for index, (start, end) in enumerate(morpheme_pieces(text)):
            piece_of |= dict.fromkeys(range(start, end), index)
        for start, end in encoding.offsets:
            assert 0 <= start < end <= len(text)
            assert piece_of[start] == piece_of[end - 1], (text[start:end], start)
        own = tokenizer.hf(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.decode(encoding.ids) == tokenizer.decode(own)
    assert tokenizer.encode(texts[3]) == encodings[3]
    ids, _, bounds = tokenizer.encode_ids(texts)
    assert ids.tolist() == [i for encoding in encodings for i in encoding.ids] and bounds[-1] == len(ids)


def test_the_stored_tokenizer_loads_back_exactly_and_its_format_is_fingerprinted(backbone, tmp_path) -> None:
    tokenizer = load_tokenizer(backbone)
    tokenizer.save_pretrained(tmp_path / "stored")
    info = json.loads((tmp_path / "stored" / "thunder_tokenizer.json").read_text(encoding="utf-8"))
    assert info["format"] == PRETRAINED_FORMAT
    again = load_tokenizer(tmp_path / "stored")
    assert type(again) is PretrainedTokenizer and again.encode(TEXT) == tokenizer.encode(TEXT)
    assert tokenizer_fingerprint(again) == tokenizer_fingerprint(tokenizer)
    assert tokenizer_fingerprint(again)["format"] == PRETRAINED_FORMAT
    assert (again.pad_token_id, again.cls_token_id, again.sep_token_id, again.mask_token_id) == tuple(
        tokenizer.hf.convert_tokens_to_ids(t) for t in ("[PAD]", "[CLS]", "[SEP]", "[MASK]"))  # fmt: skip


# ----------------------------------------------------------------------------------------------- training to use


def fit_tiny(workdir: Path, backbone: Path, *extra: str) -> Path:
    """``thunder fit --config configs/pretrained/tiny-bert.yaml`` for two steps on ``backbone``; its last.ckpt."""
    main(["fit", "--config", TINY_CONFIG, "--model.init_args.backbone", str(backbone), "--trainer.default_root_dir",
          str(workdir / "run"), "--trainer.max_steps", "2", "--trainer.limit_val_batches", "1",
          "--trainer.enable_progress_bar", "false", *extra])  # fmt: skip
    return workdir / "run" / "checkpoints" / "last.ckpt"


def test_fit_export_deid_evaluate_and_adapt_with_the_backbones_own_tokenizer(backbone, tmp_path) -> None:
    checkpoint = fit_tiny(tmp_path, backbone)
    trained_with = load_tokenizer(backbone)
    export = tmp_path / "export"
    main(["export", "--checkpoint", str(checkpoint), "--out", str(export), "--onnx", "fp32"])
    info = json.loads((export / "thunder.json").read_text(encoding="utf-8"))
    assert info["tokenizer"] == tokenizer_fingerprint(trained_with) and info["onnx"]["precision"] == "fp32"
    for source in (checkpoint, export):
        loaded = Artefact.open(source).classifier()
        assert type(loaded.tokenizer) is PretrainedTokenizer
        assert loaded.tokenizer.encode(TEXT) == trained_with.encode(TEXT)
        assert loaded.model.config.vocab_size == trained_with.vocab_size  # embeddings cut to the tokenizer's ids
    deid = Deidentifier.from_pretrained(export)  # the ONNX graph, checked against the weights
    assert deid.runtime.name == "onnx" and "010-2345-6789" not in deid(TEXT).text
    swapped = shutil.copytree(export, tmp_path / "swapped")  # the same tokenizer.json read as Thunder's own BPE
    info_file = swapped / "thunder_tokenizer.json"
    info_file.write_text(info_file.read_text(encoding="utf-8").replace(PRETRAINED_FORMAT, "thunder-mecab-bpe/1"))
    with pytest.raises(ArtefactError, match="is not the one the model was trained with"):
        Artefact.open(swapped).classifier()

    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    main(["deid", "--model", str(export), str(tmp_path / "in.txt"), "--out", str(tmp_path / "out")])
    assert "010-2345-6789" not in (tmp_path / "out" / "in.txt").read_text(encoding="utf-8")
    report = tmp_path / "report.json"
    main(["evaluate", "--model", str(export), "--split", "test", "--json", str(report)])
    assert json.loads(report.read_text(encoding="utf-8"))["leaks"]["all"]["mentions"] > 0

    main(["fit", "--config", str(REPO / "configs" / "adapt.yaml"), "--data.init_args.base_model", str(export),
          "--data.init_args.data_dir", "null", "--data.init_args.mention_dirs", "null", "--data.init_args.alias_files",
          "[]", "--data.init_args.reviewed_share", "null", "--trainer.precision", "32-true", "--trainer.max_steps", "1",
          "--trainer.limit_val_batches", "1", "--trainer.default_root_dir", str(tmp_path / "adapt"),
          "--trainer.enable_progress_bar", "false"])  # adaptation: the export's tokenizer and label set  # fmt: skip
    adapted = Artefact.open(tmp_path / "adapt" / "checkpoints" / "last.ckpt").classifier()
    assert tokenizer_fingerprint(adapted.tokenizer) == tokenizer_fingerprint(trained_with)


def test_continued_pretraining_then_fine_tuning_keeps_the_tokenizer(backbone, tmp_path, label_set) -> None:
    """MaskedLM from the backbone's own weights (its masked-LM head included, the embeddings cut to the tokenizer's
    ids) and tokenizer, then a token classifier from its checkpoint (``tokenizer: pretrained``: the one it stores)."""
    mlm = MaskedLM(backbone=str(backbone), tokenizer="pretrained")
    tokenizer = mlm.tokenizer
    dataset = MLMDataset([TEXT] * 4, None, tokenizer, seed=0, epoch=0)
    collate = PackingCollator(128, tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id)
    fit = trainer(tmp_path, 2)
    mlm.build()
    before = {k: v.clone() for k, v in mlm.model.base_model.state_dict().items()}
    published = load_file(backbone / "model.safetensors")
    prefix = mlm.model.base_model_prefix + "."
    assert all(torch.equal(v, published[prefix + k]) for k, v in before.items() if "word_embeddings" not in k)
    assert mlm.model.config.vocab_size == tokenizer.vocab_size == mlm.model.get_output_embeddings().weight.shape[0]
    fit.fit(mlm, train_dataloaders=DataLoader([dataset[i] for i in range(4)], batch_size=2, collate_fn=collate))
    fit.save_checkpoint(tmp_path / "mlm.ckpt")
    moved = [k for k, v in mlm.model.base_model.state_dict().items() if not torch.equal(v, before[k])]
    assert moved, "two steps changed no weight"
    classifier = TokenClassifier(backbone=str(backbone), init_from=str(tmp_path / "mlm.ckpt"), tokenizer="pretrained")
    assert tokenizer_fingerprint(classifier.tokenizer) == tokenizer_fingerprint(tokenizer)
    classifier.label_set = label_set
    classifier.build()
    encoder = mlm.model.base_model.state_dict()
    assert all(torch.equal(v, encoder[k]) for k, v in classifier.model.base_model.state_dict().items())


def test_data_tokenized_otherwise_is_refused_in_one_line(backbone, tmp_path, tokenizer_dir, capsys) -> None:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        fit_tiny(tmp_path, backbone, "--data.init_args.tokenizer", str(tokenizer_dir))
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip()
    assert "the data module's tokenizer is not the model's" in error and "\n" not in error


def test_windows_longer_than_the_position_embeddings_are_refused(tmp_path, demo_texts, label_set) -> None:
    backbone = random_backbone.build("tiny-bert", tmp_path / "bert", demo_texts)
    module = TokenClassifier(backbone=str(backbone), tokenizer="pretrained")
    data = RepeatedBatch(token_batch(module.tokenizer, label_set), module.tokenizer, label_set)
    data.max_length = 600
    with pytest.raises(ValueError, match="max_length 600 is longer than the 512 positions"):
        trainer(tmp_path, 1).fit(module, datamodule=data)


# ----------------------------------------------------------------------------------------------- failing closed


def cache_snapshot(hub: Path, name: str, source: Path) -> Path:
    """``source`` laid out as the Hugging Face cache holds a downloaded model: blobs, a snapshot's links, refs/main."""
    repo = hub / f"models--{name.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    for index, file in enumerate(sorted(source.iterdir())):
        blob = repo / "blobs" / f"blob{index}"
        shutil.copy(file, blob)
        (snapshot / file.name).symlink_to(Path("..", "..", "blobs", blob.name))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def test_a_hub_name_is_read_from_the_local_cache_only(tmp_path, demo_texts, label_set, monkeypatch, capsys) -> None:
    import huggingface_hub.constants

    source = random_backbone.build("tiny-bert", tmp_path / "source", demo_texts)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = cache_snapshot(tmp_path / "hub", "thunder-test/tiny-bert", source)
    assert backbone_directory("thunder-test/tiny-bert") == snapshot
    module = TokenClassifier(backbone="thunder-test/tiny-bert", tokenizer="pretrained")
    module.label_set = label_set
    module.build()  # weights read through the snapshot's links into blobs/
    stored = load_file(source / "model.safetensors")
    assert torch.equal(module.model.bert.encoder.layer[0].output.dense.weight,
                       stored["bert.encoder.layer.0.output.dense.weight"])  # fmt: skip
    with pytest.raises(FileNotFoundError, match="'thunder-test/absent': it is neither a local directory nor in the"):
        TokenClassifier(backbone="thunder-test/absent", tokenizer="pretrained")
    config_only = tmp_path / "config-only"
    config_only.mkdir()
    shutil.copy(source / "config.json", config_only)
    cache_snapshot(tmp_path / "hub", "thunder-test/config-only", config_only)
    with pytest.raises(FileNotFoundError, match="'thunder-test/config-only': its weights are not in the Hugging Face"):
        TokenClassifier(backbone="thunder-test/config-only")  # never trained from random weights instead
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["fit", "--config", TINY_CONFIG, "--model.init_args.backbone", "thunder-test/absent"])
    error = capsys.readouterr().err.strip()
    assert "thunder-test/absent" in error and "never downloads" in error and "\n" not in error


def test_a_models_own_code_is_never_run_and_weights_are_tensors_only(tmp_path, demo_texts) -> None:
    marker = tmp_path / "EXECUTED"
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "evil.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    (evil / "config.json").write_text(json.dumps({"model_type": "thunder_evil", "auto_map": {"AutoConfig": "evil.C"}}))
    (evil / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "T", "auto_map": {
        "AutoTokenizer": ["evil.T", "evil.T"]}}))  # fmt: skip
    with pytest.raises(ValueError, match="custom code"):
        TokenClassifier(backbone=str(evil))
    with pytest.raises(ValueError, match="custom code"):
        load_tokenizer(evil)
    assert not marker.exists()

    pickled = random_backbone.build("tiny-bert", tmp_path / "pickled", demo_texts)
    (pickled / "model.safetensors").unlink()

    class Payload:
        def __reduce__(self):
            return (Path(marker).write_text, ("ran",))

    torch.save({"bert.embeddings.word_embeddings.weight": Payload()}, pickled / "pytorch_model.bin")
    with pytest.raises(ArtefactError, match="not a loadable checkpoint of tensors"):
        Artefact.open(pickled).pretrained()
    assert not marker.exists()


@pytest.mark.parametrize(("name", "backbone"), [("klue-roberta-base", "klue/roberta-base"),
                                                ("klue-roberta-base-mlm", "klue/roberta-base"),
                                                ("mdeberta-v3-base", "microsoft/mdeberta-v3-base"),
                                                ("tiny-bert", "runs/pretrained/tiny-bert")])  # fmt: skip
def test_the_pretrained_configs_parse_with_the_thunder_cli(name: str, backbone: str) -> None:
    from thunder.commands.trainer import ThunderCLI

    class ParseOnly(ThunderCLI):
        def instantiate_classes(self) -> None:  # every section checked against the real signatures, nothing built
            pass

    config = ParseOnly(args=["--config", str(REPO / "configs" / "pretrained" / f"{name}.yaml")], run=False).config
    assert (config.model.init_args.backbone, config.model.init_args.tokenizer) == (backbone, "pretrained")
    assert config.data.init_args.tokenizer is None  # the model's, handed over by thunder fit
    task = "MaskedLM" if name.endswith("-mlm") else "TokenClassifier"
    assert config.model.class_path == f"thunder.model.{task}"
