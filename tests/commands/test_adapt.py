"""The adaptation loop end to end on the demo corpus: the review page's spans -> the reviewed JSONL it downloads ->
``thunder fit --config configs/adapt.yaml --data.init_args.reviewed '[DIR/]'`` run from another folder (the config's
paths read from its own folder) -> the adapted model served."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import torch

from thunder.data import DEMO_CORPUS, Filler, Recipe
from thunder.deid.pipeline import Deidentifier
from thunder.model.export import write_export
from thunder.model.loader import Artefact, tokenizer_fingerprint
from thunder.service.app import create_app, running
from thunder.synthesis.mentions import DEMO_MENTIONS
from thunder.taxonomy import LabelSet

REPO = Path(__file__).resolve().parents[2]


def post(url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(url + path, data=json.dumps(body).encode("utf-8"), method="POST",
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200
        return json.loads(response.read())


def reviewed_download(url: str, documents: list[tuple[str, str, list[tuple[int, int, str]]]]) -> str:
    """What a clerk downloads from the review page ("download reviewed spans", as review.js writes it): for each
    document the service's spans reviewed against the gold ones: the wrong ones rejected, the right ones kept (with
    the gold label), the missed ones added."""
    lines = []
    for doc_id, text, gold in documents:
        ranges = {(start, end) for start, end, _ in gold}
        served = post(url, "/v1/deid", {"text": text})["spans"]
        rejected = [[s["start"], s["end"], s["label"]] for s in served if (s["start"], s["end"]) not in ranges]
        record = {"id": doc_id, "text": text, "spans": [list(span) for span in gold], "rejected": rejected}
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)


def test_review_download_fit_adapt_and_serve(tmp_path: Path, tokenizer, taxonomy, one_thread) -> None:
    from helpers import build_tiny_model

    # the model the court runs: an export of a token classifier (random tiny weights: the loop, not the quality)
    label_set = LabelSet(taxonomy, granularity="category", scheme="IO")
    base = write_export(tmp_path / "base", build_tiny_model(tokenizer, label_set), tokenizer, label_set,
                        "token-classification")  # fmt: skip
    # the court's judgments with the clerk's spans (demo judgments filled once: their gold spans)
    recipe = Recipe()
    filler = Filler(recipe, recipe.load_taxonomy())
    synthesizer = filler.synthesizer("train")
    judgments = []
    for doc in filler.documents()["test"][:6]:
        filled = synthesizer(doc)
        judgments.append((doc.doc_id, filled.text, [(s.start, s.end, s.label) for s in filled.spans]))

    with running(create_app(Deidentifier.from_pretrained(base, max_length=128, stride=32))) as (url, _):
        download = reviewed_download(url, judgments)
    court = tmp_path / "court"  # the clerk's folder: the run starts here, far from the repository
    reviews = court / "my_reviews"
    reviews.mkdir(parents=True)
    (reviews / "reviewed-spans.jsonl").write_text(download, encoding="utf-8")

    # configs/adapt.yaml as it ships, in a repository with the export where it names the small model and the demo
    # corpus where it names the shared one: its relative paths are read from its folder, wherever the run starts
    repository = tmp_path / "thunder"
    (repository / "configs").mkdir(parents=True)
    (repository / "configs" / "adapt.yaml").write_bytes((REPO / "configs" / "adapt.yaml").read_bytes())
    shipped = repository / "runs" / "small" / "finetune" / "checkpoints" / "last.ckpt"
    shipped.parent.mkdir(parents=True)
    base.rename(shipped)  # an export (a directory) where adapt.yaml names the small model's checkpoint
    corpus = tmp_path / "shared" / "data" / "snu-thunder-deid"
    corpus.mkdir(parents=True)
    for name, target in (("annotated", DEMO_CORPUS), ("mentions", DEMO_MENTIONS), ("mentions-llm", DEMO_MENTIONS)):
        (corpus / name).symlink_to(target, target_is_directory=True)
    (corpus / "tag_aliases.json").write_text("{}", encoding="utf-8")
    command = [
        sys.executable, "-m", "thunder", "fit", "--config", str(repository / "configs" / "adapt.yaml"),
        "--data.init_args.reviewed", "[my_reviews/]",  # on the command line: from the current directory
        "--trainer.max_steps", "6", "--trainer.max_time", "00:00:05:00", "--trainer.precision", "32-true",
        "--trainer.enable_progress_bar", "false", "--trainer.default_root_dir", "runs/court",
    ]  # fmt: skip
    result = subprocess.run(command, cwd=court, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert " of 6 reviewed judgments (" in result.stdout + result.stderr  # the log says what it read
    assert not (court / "runs" / "adapt").exists()  # --trainer.default_root_dir moves logs and checkpoints
    adapted = court / "runs" / "court" / "checkpoints" / "last.ckpt"
    assert torch.load(adapted, map_location="cpu", weights_only=True)["global_step"] == 6

    model, adapted_tokenizer, adapted_labels, _ = Artefact.open(adapted).classifier()[:4]
    base_model = Artefact.open(shipped).classifier().model
    assert adapted_labels.to_dict() == label_set.to_dict()
    assert tokenizer_fingerprint(adapted_tokenizer) == tokenizer_fingerprint(tokenizer)
    moved = (model.state_dict()["classifier.weight"] - base_model.state_dict()["classifier.weight"]).abs().max()
    assert 0 < moved < 0.005  # the base's head after 6 steps at a learning rate of at most 2e-4 (a new one: ~0.08)
    stored = Artefact.open(adapted).recipe()
    assert stored["reviewed"] == [str(reviews)] and stored["reviewed_share"] == 0.5
    assert stored["data_dir"] == str(corpus / "annotated")  # from the config's folder: ../../shared/...
    assert stored["alias_files"] == [str(corpus / "tag_aliases.json")]

    with running(create_app(Deidentifier.from_pretrained(adapted, max_length=128, stride=32))) as (url, _):
        served = post(url, "/v1/deid", {"text": "피고인은 2024. 1. 2. 010-2718-2818로 피해자에게 전화하였다."})
    assert "010-2718-2818" not in served["text"] and served["spans"]
