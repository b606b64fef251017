"""The unseen-mention split (issue 14): mention lists split by entity, training and the seen test set drawing from
one part, the unseen test set from the other with a name family training never uses; both test sets logged and
evaluated side by side."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch
from lightning.pytorch import Trainer
from lightning.pytorch.loggers import TensorBoardLogger

from thunder.commands.evaluate import RecipeOptions, evaluate_command
from thunder.data import DeIdDataModule, MLMDataModule, Recipe
from thunder.deid.pipeline import PipelineOptions
from thunder.evaluation.gold import load_documents
from thunder.model.modules import TokenClassifier
from thunder.synthesis.mentions import (
    DEMO_MENTIONS,
    GENERATORS,
    ListSource,
    MentionBank,
    MentionContext,
    held_out,
    load_mention_lists,
)
from thunder.synthesis.names import PersonNames

HOLDOUT = 0.3


@pytest.fixture(scope="module")
def parts() -> tuple[set[str], set[str]]:
    """Entities of the demo lists in the training part and in the held-back part."""
    lists = load_mention_lists([DEMO_MENTIONS])
    every = {m for ms in lists.by_label.values() for m in ms}
    held = {m for m in every if held_out(m, HOLDOUT)}
    return every - held, held


def test_held_out_is_a_stable_hash_of_the_entity_text() -> None:
    words = [f"가게{i}" for i in range(4000)]
    share = sum(held_out(w, 0.1) for w in words) / len(words)
    assert 0.08 < share < 0.12
    assert [held_out(w, 0.1) for w in words] == [held_out(w, 0.1) for w in reversed(words)][::-1]
    assert held_out("한빛 마트", 0.5, seed=1) == held_out("한빛마트", 0.5, seed=1)  # spacing variants go together
    assert [held_out(w, 0.1, seed=1) for w in words] != [held_out(w, 0.1, seed=0) for w in words]


def test_bank_parts_are_disjoint_and_the_held_back_part_uses_the_unseen_name_family(taxonomy, parts) -> None:
    train_part, held = parts
    train = MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS], holdout=HOLDOUT, part="train")
    test = MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS], holdout=HOLDOUT, part="heldout")
    checked = 0
    for label, source in train.sources.items():
        if isinstance(source, ListSource):
            assert not set(source.mentions) & held, label
            other = test.sources[label]
            if isinstance(other, ListSource):
                assert not set(other.mentions) & train_part, label
                checked += 1
    assert checked >= 10
    assert train.source("내국인이름") is GENERATORS["korean_name"]
    assert isinstance(test.source("내국인이름"), PersonNames) and test.source("내국인이름").family == "unseen"
    broad = MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS], generators={"내국인이름": "thunder.synthesis.names.PersonNames"},
                                  holdout=HOLDOUT, part="heldout")  # fmt: skip
    assert broad.source("내국인이름").family == "unseen"  # whatever name family training used
    with pytest.raises(ValueError, match="holdout share > 0"):
        MentionBank.from_dirs(taxonomy, [DEMO_MENTIONS], part="heldout")


def _strays(texts: set[str], forbidden: set[str], allowed: set[str]) -> set[str]:
    """Texts that are entries of the ``forbidden`` part, except the cut form of an ``allowed`` entry (``로얄`` of
    ``로얄아파트`` before ``아파트``, which synthesis trims)."""
    return {t for t in texts & forbidden if t not in allowed and not any(a.startswith(t) or a.endswith(t) for a in allowed)}


def _list_mentions(module: DeIdDataModule, dataset: str, epochs: int, label: str | None = None) -> list[str]:
    data = module.datasets[dataset]
    texts = []
    for epoch in range(epochs):
        for index in range(len(data)):
            doc = data.synthesize(index, epoch)
            texts += [doc.text[s.start : s.end] for s in doc.spans if label in (None, s.label)]
    return texts


def test_training_never_sees_held_back_entities_and_the_unseen_test_set_sees_only_them(parts) -> None:
    train_part, held = parts
    module = DeIdDataModule(mention_holdout=HOLDOUT, max_length=64, stride=16)
    module.setup("fit")
    assert module.test_sets == ("seen", "unseen")
    trained = _list_mentions(module, "train", 2) + _list_mentions(module, "val", 1)
    seen_test = _list_mentions(module, "test", 1)
    unseen_test = _list_mentions(module, "test_unseen", 1)
    assert not _strays(set(trained + seen_test), held, train_part)
    assert not _strays(set(unseen_test), train_part, held)
    assert len(set(unseen_test) & held) >= 10  # the check above is not vacuous
    unseen_names = set(_list_mentions(module, "test_unseen", 1, "내국인이름"))
    assert unseen_names and not unseen_names & set(_list_mentions(module, "train", 3, "내국인이름"))
    loaders = module.test_dataloader()
    assert isinstance(loaders, list) and len(loaders) == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"test_mentions": "unseen"}, "needs mention_holdout"),
        ({"mention_holdout": 1.0}, "mention_holdout must be in"),
        ({"mention_holdout": 0.1, "test_mentions": "all"}, "test_mentions"),
        ({"random_mentions": -0.1}, "random_mentions"),
    ],
)
def test_bad_unseen_options_are_refused(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DeIdDataModule(**options)


def test_test_mentions_choose_the_test_sets() -> None:
    assert DeIdDataModule().test_sets == ("",)
    assert DeIdDataModule(mention_holdout=0.1, test_mentions="seen").test_sets == ("seen",)
    assert DeIdDataModule(mention_holdout=0.1, test_mentions="unseen").test_sets == ("unseen",)
    state = DeIdDataModule(mention_holdout=0.1, random_mentions=0.2).state_dict()
    assert (state["mention_holdout"], state["random_mentions"]) == (0.1, 0.2)


def test_mlm_pretraining_draws_from_the_training_part_only(parts) -> None:
    _, held = parts
    module = MLMDataModule(mention_holdout=HOLDOUT, max_length=64)
    module.setup("fit")
    bank = module.datasets["train"].synthesizer.mentions
    for source in bank.sources.values():
        if isinstance(source, ListSource):
            assert not set(source.mentions) & held


def test_token_classifier_logs_both_test_sets(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    torch.manual_seed(0)
    module = DeIdDataModule(mention_holdout=HOLDOUT, granularity="category", max_length=64, stride=16, batch_size=4)
    logger = TensorBoardLogger(tmp_path, name="tb")
    trainer = Trainer(accelerator="cpu", devices=1, logger=logger, limit_test_batches=2, enable_progress_bar=False,
                      enable_model_summary=False, enable_checkpointing=False)  # fmt: skip
    results = trainer.test(TokenClassifier(backbone="tiny"), datamodule=module)
    logged = {key for result in results for key in result}
    for name in ("seen", "unseen"):
        assert {f"test/{name}/binary_f1", f"test/{name}/micro_f1", f"test/{name}/loss"} <= logged
    assert not any("dataloader_idx" in key for key in logged)
    logger.experiment.flush()
    events = EventAccumulator(logger.log_dir, size_guidance={"tensors": 0, "scalars": 0}).Reload()
    assert {"test/seen/binary_f1", "test/unseen/binary_f1"} <= set(events.Tags()["scalars"])
    assert {"test/seen/per_type/text_summary", "test/unseen/per_type/text_summary"} <= set(events.Tags()["tensors"])


def test_evaluate_fills_unseen_documents_from_the_held_back_part(taxonomy, parts) -> None:
    train_part, held = parts
    recipe = Recipe(mention_holdout=HOLDOUT)
    seen = list(load_documents(recipe, taxonomy, limit=8))
    unseen = list(load_documents(recipe, taxonomy, mentions="unseen", limit=8))
    assert [d.doc_id for d in seen] == [d.doc_id for d in unseen]
    seen_texts = {d.text[s.start : s.end] for d in seen for s in d.spans}
    unseen_texts = {d.text[s.start : s.end] for d in unseen for s in d.spans}
    assert not _strays(seen_texts, held, train_part) and not _strays(unseen_texts, train_part, held)
    names = lambda docs: {d.text[s.start : s.end] for d in docs for s in d.spans if s.label == "내국인이름"}  # noqa: E731
    assert names(unseen) and not names(unseen) & names(seen)
    with pytest.raises(ValueError, match="mention_holdout"):
        list(load_documents(Recipe(), taxonomy, mentions="unseen"))


def test_evaluate_command_reports_seen_and_unseen_side_by_side(tmp_path: Path, capsys) -> None:
    out = tmp_path / "report.json"
    reports = evaluate_command(pipeline=PipelineOptions(recognizers_only=True), limit=4, mentions="both",
                               recipe=RecipeOptions(mention_holdout=HOLDOUT), json=str(out))  # fmt: skip
    assert set(reports) == {"seen", "unseen"}
    assert reports["unseen"].meta["mentions"] == "unseen" and reports["seen"].meta["mention_holdout"] == HOLDOUT
    printed = capsys.readouterr().out
    assert "recognizers, seen mentions" in printed and "recognizers, unseen mentions" in printed
    assert set(json.loads(out.read_text(encoding="utf-8"))) == {"seen", "unseen"}
    with pytest.raises(ValueError, match="mention_holdout"):
        evaluate_command(pipeline=PipelineOptions(recognizers_only=True), limit=1, mentions="unseen")


def test_unseen_names_are_never_drawn_by_training_generators() -> None:
    context = MentionContext("내국인이름", (("피해자 ", "에게"),))
    unseen = {PersonNames("unseen").sample(random.Random(i), context) for i in range(300)}
    for source in (GENERATORS["korean_name"], PersonNames("broad")):
        drawn = {source.sample(random.Random(i), context) for i in range(3000)}
        assert len(unseen & drawn) < 0.05 * len(unseen), source
