"""``thunder export``: Hugging Face directory round trip, and load_exported for directories and checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from helpers import RepeatedBatch, mlm_batch, token_batch, trainer
from torch.utils.data import DataLoader
from transformers import AutoModelForTokenClassification

from thunder.cli import main
from thunder.data import Recipe
from thunder.language.tokenizer import ThunderTokenizer
from thunder.model import integrity
from thunder.model.export import export_checkpoint
from thunder.model.loader import Artefact
from thunder.model.modules import MaskedLM, TokenClassifier

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tokenizer, label_set) -> tuple[Path, TokenClassifier]:
    tmp = tmp_path_factory.mktemp("export")
    module = TokenClassifier(backbone="tiny", lr=1e-3)
    fit = trainer(tmp, 2)
    fit.fit(module, datamodule=RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set))
    fit.save_checkpoint(tmp / "model.ckpt")
    return tmp / "model.ckpt", module.eval()


def test_export_round_trip_through_cli(trained, tmp_path, tokenizer, label_set, capsys) -> None:
    checkpoint, module = trained
    out = tmp_path / "hf"
    main(["export", "--checkpoint", str(checkpoint), "--out", str(out)])
    assert "identifiers of the self-test at its operating point" in capsys.readouterr().out
    model = AutoModelForTokenClassification.from_pretrained(out).eval()
    assert model.config.id2label == dict(enumerate(label_set.names))
    assert model.config.label2id[label_set.names[3]] == 3
    info = json.loads((out / "thunder.json").read_text(encoding="utf-8"))
    assert info["label_set"] == label_set.to_dict()
    assert info["label_set"]["fingerprint"] == label_set.taxonomy.fingerprint()
    assert info["tokenizer"]["vocab_size"] == tokenizer.vocab_size
    batch = token_batch(tokenizer, label_set, seed=3)
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask")}
    with torch.no_grad():
        assert torch.allclose(model(**inputs).logits, module.model(**inputs).logits, atol=1e-6)
    text = "피해자 홍길동에게 전화하였다."
    assert ThunderTokenizer.from_pretrained(out).encode(text).ids == tokenizer.encode(text).ids


def test_load_exported_from_directory_and_checkpoint(trained, tmp_path, tokenizer, label_set) -> None:
    checkpoint, module = trained
    out = export_checkpoint(checkpoint, tmp_path / "hf")
    batch = token_batch(tokenizer, label_set, seed=4)
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask")}
    with torch.no_grad():
        expected = module.model(**inputs).logits
        for source in (out, checkpoint):
            model, loaded_tokenizer, loaded_labels, _ = Artefact.open(source).classifier()[:4]
            assert not model.training and loaded_labels.names == label_set.names
            assert loaded_tokenizer.vocab_size == tokenizer.vocab_size
            assert torch.allclose(model(**inputs).logits, expected, atol=1e-6)
    with pytest.raises(FileExistsError):
        export_checkpoint(checkpoint, out)


def test_exported_mlm_initialises_a_token_classifier(tmp_path, tokenizer, tokenizer_dir, label_set) -> None:
    mlm = MaskedLM(backbone="tiny", tokenizer=str(tokenizer_dir))
    fit = trainer(tmp_path, 1)
    fit.fit(mlm, train_dataloaders=DataLoader([mlm_batch(tokenizer)], batch_size=None))
    fit.save_checkpoint(tmp_path / "mlm.ckpt")
    out = export_checkpoint(tmp_path / "mlm.ckpt", tmp_path / "mlm-hf")
    with pytest.raises(ValueError, match="not a token classifier"):
        Artefact.open(out).classifier()
    classifier = TokenClassifier(init_from=str(out))
    classifier.label_set, classifier._tokenizer = label_set, tokenizer
    classifier.build()
    encoder = mlm.model.base_model.state_dict()
    assert all(torch.equal(v, encoder[k]) for k, v in classifier.model.base_model.state_dict().items())


def test_an_export_carries_the_training_recipe(trained, tmp_path) -> None:
    """``thunder evaluate --model EXPORT`` reads the recipe the checkpoint's data module kept."""
    checkpoint, _ = trained
    assert Artefact.open(checkpoint).recipe() is None and "recipe" not in json.loads(
        (export_checkpoint(checkpoint, tmp_path / "plain") / "thunder.json").read_text(encoding="utf-8"))
    state = torch.load(checkpoint, weights_only=True)
    recipe = Recipe(data_dir="corpus", mention_holdout=0.1, seed=2, root=str(tmp_path)).to_dict()
    torch.save({**state, "DeIdDataModule": {"seed": 2, "recipe": recipe}}, tmp_path / "with_recipe.ckpt")
    out = export_checkpoint(tmp_path / "with_recipe.ckpt", tmp_path / "hf")
    assert json.loads((out / "thunder.json").read_text(encoding="utf-8"))["recipe"] == recipe
    assert Artefact.open(out).recipe() == Artefact.open(tmp_path / "with_recipe.ckpt").recipe() == recipe


def test_the_operating_point_travels_with_the_model(tmp_path, tokenizer, label_set) -> None:
    """A model validated at threshold 0.3 runs at 0.3 from its checkpoint, its export and ``thunder deid`` (issue 29);
    an explicit option still wins, and an export that stores none runs at the old defaults."""
    from thunder.deid.pipeline import Deidentifier, PipelineOptions
    from thunder.model.decoding import OperatingPoint

    module = TokenClassifier(backbone="tiny", lr=1e-3, threshold=0.3, grow_threshold=0.05)
    fit = trainer(tmp_path, 1, limit_val_batches=1)
    fit.fit(module, datamodule=RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set))
    fit.save_checkpoint(tmp_path / "model.ckpt")
    export = tmp_path / "export"
    main(["export", "--checkpoint", str(tmp_path / "model.ckpt"), "--out", str(export)])
    info = json.loads((export / "thunder.json").read_text(encoding="utf-8"))
    assert info["operating_point"] == {"threshold": 0.3, "grow_threshold": 0.05}
    for source in (export, tmp_path / "model.ckpt"):
        deid = Deidentifier.from_pretrained(source)
        assert deid.operating_point == OperatingPoint(0.3, 0.05)
    assert PipelineOptions(model=str(export), threshold=0.6).build().operating_point == OperatingPoint(0.6, 0.05)
    assert PipelineOptions(model=str(export), grow_threshold="off").build().operating_point.grow_threshold is None

    text = "피고인 홍길동은 피해자 김철수에게 010-1234-5678로 전화하였다.\n"
    (tmp_path / "in.txt").write_text(text, encoding="utf-8")
    for options, expected in [((), (0.3, 0.05)), (("--threshold", "0.45", "--grow_threshold", "off"), (0.45, None))]:
        out = tmp_path / f"out{len(options)}"
        main(["deid", str(tmp_path / "in.txt"), "--model", str(export), "--out", str(out), *options])
        settings = json.loads((out / ".thunder-run.json").read_text(encoding="utf-8"))["settings"]
        assert (settings["threshold"], settings["grow_threshold"]) == expected  # what the run used
        reference = Deidentifier.from_pretrained(export, operating_point=OperatingPoint(*expected))
        assert (out / "in.txt").read_text(encoding="utf-8") == reference(text).text
    del info["operating_point"]  # an edited export: refused, its fingerprint covers the operating point
    (export / "thunder.json").write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="not the ones the model was written with"):
        Deidentifier.from_pretrained(export)
    del info["fingerprint"], info["self_test"]  # an export of an older Thunder: refused unless allowed (issue 71)
    (export / "thunder.json").write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="no fingerprint recorded"):
        Deidentifier.from_pretrained(export)
    with integrity.unverified_allowed(), pytest.warns(UserWarning, match="no fingerprint recorded"):
        old = Deidentifier.from_pretrained(export)
    assert old.operating_point == OperatingPoint(0.5, 0.1)


def test_the_training_windows_travel_with_the_model(tmp_path, tokenizer, label_set) -> None:
    """A model trained on windows of 64 tokens with a stride of 16 de-identifies with them from its checkpoint, its
    export and ``thunder deid`` (issue 57); an explicit option wins, an edited stored window is refused, and a model
    that stores none runs with 512/128."""
    from thunder.deid.pipeline import Deidentifier, PipelineOptions
    from thunder.language.tokenizer import Windows

    data = RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set)
    data.max_length, data.stride = 64, 16  # as DeIdDataModule keeps them
    module = TokenClassifier(backbone="tiny", lr=1e-3)
    fit = trainer(tmp_path, 1)
    fit.fit(module, datamodule=data)
    fit.save_checkpoint(tmp_path / "model.ckpt")
    export = export_checkpoint(tmp_path / "model.ckpt", tmp_path / "export")
    info = json.loads((export / "thunder.json").read_text(encoding="utf-8"))
    assert info["windows"] == {"max_length": 64, "stride": 16}
    for source in (export, tmp_path / "model.ckpt"):
        assert Deidentifier.from_pretrained(source).windowing == Windows(64, 16)
    assert Deidentifier.from_pretrained(export, max_length=32).windowing == Windows(32, 16)
    assert PipelineOptions(model=str(export), stride=0).build().windowing == Windows(64, 0)
    with pytest.raises(ValueError, match="stride"):
        PipelineOptions(model=str(export), max_length=16).build()  # the stored stride no longer fits: refused

    (tmp_path / "in.txt").write_text("피고인 홍길동은 피해자 김철수에게 전화하였다.\n" * 30, encoding="utf-8")
    main(["deid", str(tmp_path / "in.txt"), "--model", str(export), "--out", str(tmp_path / "out")])
    settings = json.loads((tmp_path / "out" / ".thunder-run.json").read_text(encoding="utf-8"))["settings"]
    assert (settings["max_length"], settings["stride"]) == (64, 16)  # what the run used

    (export / "thunder.json").write_text(json.dumps({**info, "windows": {"max_length": 8, "stride": 0}}), "utf-8")
    with pytest.raises(ValueError, match="not the ones the model was written with"):
        Deidentifier.from_pretrained(export)  # the fingerprint covers the windows
    (export / "thunder.json").write_text(json.dumps({**info, "windows": {"max_length": 64}}), "utf-8")
    with pytest.raises(ValueError, match="thunder.json: the stored windows"):
        Deidentifier.from_pretrained(export)

    plain = TokenClassifier(backbone="tiny", lr=1e-3)
    fit = trainer(tmp_path / "plain", 1)
    fit.fit(plain, datamodule=RepeatedBatch(token_batch(tokenizer, label_set), tokenizer, label_set))
    fit.save_checkpoint(tmp_path / "plain.ckpt")
    assert "windows" not in torch.load(tmp_path / "plain.ckpt", weights_only=True)["thunder"]
    assert Deidentifier.from_pretrained(tmp_path / "plain.ckpt").windowing == Windows(512, 128)


def test_windows_are_checked() -> None:
    from thunder.language.tokenizer import Windows

    assert Windows().given(stride=0) == Windows(512, 0) and Windows.from_dict(None) == Windows()
    assert Windows.from_dict(Windows(256, 64).to_dict()) == Windows(256, 64)
    for bad in ({"max_length": 2, "stride": 0}, {"max_length": 64, "stride": 62}, {"max_length": 64.5, "stride": 1},
                {"max_length": 64, "stride": 1, "x": 1}, [64, 16]):  # fmt: skip
        with pytest.raises(ValueError):
            Windows.from_dict(bad)


def test_export_and_deid_print_no_progress_bars_of_transformers(trained, tmp_path) -> None:
    """Thunder's commands say what they did in lines of their own: no "Writing model shards" / "Loading weights"."""
    import os
    import subprocess
    import sys

    checkpoint, _ = trained
    environment = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    thunder = [sys.executable, "-m", "thunder"]
    export = subprocess.run([*thunder, "export", "--checkpoint", str(checkpoint), "--out", str(tmp_path / "hf")],
                            capture_output=True, text=True, env=environment, check=True)  # fmt: skip
    deid = subprocess.run([*thunder, "deid", "--model", str(tmp_path / "hf")], input="피고인 홍길동은 전화하였다.\n",
                          capture_output=True, text=True, env=environment, check=True)  # fmt: skip
    for stderr in (export.stderr, deid.stderr):
        assert not any(bar in stderr for bar in ("Writing model shards", "Loading weights", "it/s]")), stderr


def test_half_precision_export_is_half_the_size_verified_and_answers_as_the_rounded_model(trained, tmp_path,
                                                                                          tokenizer, label_set) -> None:
    checkpoint, module = trained
    full = export_checkpoint(checkpoint, tmp_path / "fp32")
    main(["export", "--checkpoint", str(checkpoint), "--out", str(tmp_path / "fp16"), "--weights", "float16"])
    half = tmp_path / "fp16"
    full_size, half_size = ((p / "model.safetensors").stat().st_size for p in (full, half))
    assert half_size < 0.55 * full_size
    loaded = Artefact.open(half).classifier()  # fingerprint and self-test pass
    assert all(t.dtype == torch.float32 for t in loaded.model.state_dict().values())
    batch = token_batch(tokenizer, label_set, seed=5)
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask")}
    rounded = {name: t.half().float() for name, t in module.model.state_dict().items()}
    for name, tensor in loaded.model.state_dict().items():
        assert torch.equal(tensor, rounded[name]), name
    with torch.no_grad():
        assert torch.allclose(loaded.model(**inputs).logits, module.model(**inputs).logits, atol=1e-2)
    with pytest.raises(SystemExit, match="--weights must be one of float32, float16, got 'int4'"):
        main(["export", "--checkpoint", str(checkpoint), "--out", str(tmp_path / "int4"), "--weights", "int4"])
