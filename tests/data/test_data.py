"""thunder.data: token labels, windows, batches, per-epoch synthesis, resumption, splits, MLM masking, preview."""

from __future__ import annotations

import json
import random
import re
import warnings
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import Callback, ModelCheckpoint

from thunder.commands.data import preview_command
from thunder.data import (
    DEMO_CORPUS,
    IGNORE_INDEX,
    DeIdDataModule,
    EpochSampler,
    MLMDataModule,
    PackingCollator,
    Recipe,
    ResumableDataLoader,
    TokenCollator,
    mask_tokens,
    morpheme_groups,
    split_documents,
    token_labels,
    window_examples,
)
from thunder.language.tokenizer import ThunderTokenizer
from thunder.synthesis.synthesizer import EntitySpan, head_outside_labels
from thunder.taxonomy import LabelSet, Taxonomy

torch.set_num_threads(1)


def datamodule(tokenizer_dir: Path, **kwargs) -> DeIdDataModule:
    kwargs.setdefault("batch_size", 8)
    kwargs.setdefault("max_length", 64)
    kwargs.setdefault("stride", 16)
    module = DeIdDataModule(tokenizer=str(tokenizer_dir), **kwargs)
    module.setup("fit")
    return module


# ----------------------------------------------------------------------------------------------- labels


def test_token_labels_at_span_edges_with_particle(tokenizer: ThunderTokenizer, taxonomy: Taxonomy) -> None:
    text = "피해자 홍길동은 서울에서 김영희를 만났다"
    name1, name2 = (4, 7), (14, 17)
    assert text[slice(*name1)] == "홍길동" and text[slice(*name2)] == "김영희"
    spans = [EntitySpan(*name1, "내국인이름", "A"), EntitySpan(*name2, "내국인이름", "B")]
    encoding = tokenizer.encode(text)
    bio = LabelSet(taxonomy, granularity="label", scheme="BIO")
    labels = token_labels(encoding.offsets, spans, bio)
    begin, inside = bio.begin_id("내국인이름"), bio.inside_id("내국인이름")
    assert begin != inside
    for span in spans:
        inside_tokens = [i for i, (s, e) in enumerate(encoding.offsets) if s < span.end and e > span.start]
        assert inside_tokens, "the name must have tokens"
        assert labels[inside_tokens[0]] == begin
        assert all(labels[i] == inside for i in inside_tokens[1:])
        # the particle right after the name and the space before it stay outside
        after = inside_tokens[-1] + 1
        assert encoding.offsets[after][0] == span.end and labels[after] == 0
        assert labels[inside_tokens[0] - 1] == 0
    assert sum(label != 0 for label in labels) == sum(
        1 for s, e in encoding.offsets if any(s < sp.end and e > sp.start for sp in spans)
    )
    # IO: one id per type; binary granularity maps every label to the same type
    io = LabelSet(taxonomy, granularity="binary", scheme="IO")
    io_labels = token_labels(encoding.offsets, spans, io)
    assert {label for label in io_labels} == {0, io.inside_id(io.entity_type("내국인이름"))}
    assert [label != 0 for label in io_labels] == [label != 0 for label in labels]


def test_token_that_straddles_a_span_edge_is_inside(taxonomy: Taxonomy) -> None:
    label_set = LabelSet(taxonomy, granularity="label", scheme="BIO")
    offsets = [(0, 2), (2, 5), (5, 6), (6, 6), (7, 9)]
    spans = [EntitySpan(3, 6, "내국인이름", "A")]
    labels = token_labels(offsets, spans, label_set)
    assert labels == [0, label_set.begin_id("내국인이름"), label_set.inside_id("내국인이름"), 0, 0]


# ----------------------------------------------------------------------------------------------- windows


def test_val_windows_score_every_token_once_and_drop_no_text(tokenizer: ThunderTokenizer, taxonomy: Taxonomy) -> None:
    text = "피고인은 2019. 2. 17. 서울에서 홍길동에게 전화를 걸었다.\n" * 12
    encoding = tokenizer.encode(text)
    label_set = LabelSet(taxonomy)
    spans = [EntitySpan(m, m + 3, "내국인이름", "A") for m in _find_all(text, "홍길동")]
    labels = token_labels(encoding.offsets, spans, label_set)
    max_length, stride = 24, 8
    windows = window_examples(encoding, labels, tokenizer, max_length, stride, score_once=True)
    assert len(windows) > 3
    assert all(len(w["input_ids"]) <= max_length for w in windows)
    assert all(w["input_ids"][0] == tokenizer.cls_token_id for w in windows)
    assert all(w["input_ids"][-1] == tokenizer.sep_token_id for w in windows)
    # every token scored exactly once, with its document label, in document order
    scored_ids = [i for w in windows for i, l in zip(w["input_ids"], w["labels"]) if l != IGNORE_INDEX]
    scored_labels = [l for w in windows for l in w["labels"] if l != IGNORE_INDEX]
    assert scored_ids == encoding.ids
    assert scored_labels == labels
    assert tokenizer.decode(scored_ids) == text
    # training windows label every token of every window (overlaps included)
    train = window_examples(encoding, labels, tokenizer, max_length, stride, score_once=False)
    assert sum(l != IGNORE_INDEX for w in train for l in w["labels"]) == sum(len(w["input_ids"]) - 2 for w in train)
    assert sum(len(w["input_ids"]) - 2 for w in train) == len(encoding.ids) + stride * (len(train) - 1)


def _find_all(text: str, needle: str) -> list[int]:
    found, position = [], text.find(needle)
    while position >= 0:
        found.append(position)
        position = text.find(needle, position + 1)
    return found


def test_collate_pads_dynamically() -> None:
    collate = TokenCollator(pad_token_id=0)
    items = [
        [{"input_ids": [1, 7, 8, 2], "labels": [-100, 3, 0, -100]}],
        [{"input_ids": [1, 9, 2], "labels": [-100, 4, -100]}, {"input_ids": [1, 2], "labels": [-100, -100]}],
    ]
    batch = collate(items)
    assert set(batch) == {"input_ids", "attention_mask", "labels"}
    assert batch["input_ids"].tolist() == [[1, 7, 8, 2], [1, 9, 2, 0], [1, 2, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 0]]
    assert batch["labels"].tolist() == [[-100, 3, 0, -100], [-100, 4, -100, -100], [-100, -100, -100, -100]]
    assert all(t.dtype == torch.long for t in batch.values())
    assert TokenCollator(0, pad_to_multiple_of=8)(items)["input_ids"].shape == (3, 8)


# ----------------------------------------------------------------------------------------------- data module


def test_datamodule_batches_follow_the_contract(tokenizer_dir: Path) -> None:
    module = datamodule(tokenizer_dir, scheme="BIO")
    assert module.label_set.names[0] == "O"
    batch = next(iter(module.train_dataloader()))
    assert batch["input_ids"].shape == batch["labels"].shape == batch["attention_mask"].shape
    assert batch["input_ids"].shape[1] <= 64
    assert (batch["labels"][batch["attention_mask"] == 0] == IGNORE_INDEX).all()
    assert (batch["labels"][:, 0] == IGNORE_INDEX).all()
    assert batch["labels"].max() < len(module.label_set.names)
    assert (batch["labels"] > 0).any(), "demo documents have entities"
    val = next(iter(module.val_dataloader()))
    assert val["input_ids"].shape[0] >= 8  # long documents give several windows


def _batches(loader) -> list[list[list[int]]]:
    return [batch["input_ids"].tolist() for batch in loader]


def test_same_batches_with_any_number_of_workers(tokenizer_dir: Path) -> None:
    module = datamodule(tokenizer_dir, group_by_length=True)
    loader = module.train_dataloader()
    loader.sampler.set_epoch(1)
    single = _batches(loader)
    module.num_workers = 2
    loader = module.train_dataloader()
    loader.sampler.set_epoch(1)
    assert _batches(loader) == single
    loader.sampler.set_epoch(2)
    assert _batches(loader) != single


def test_per_epoch_resampling_changes_mentions_single_keeps_them(tokenizer_dir: Path) -> None:
    per_epoch = datamodule(tokenizer_dir).datasets["train"]
    texts = [[per_epoch.synthesize(i, epoch).text for i in range(10)] for epoch in (0, 1)]
    assert sum(a != b for a, b in zip(*texts)) >= 8
    assert texts[0] == [per_epoch.synthesize(i, 0).text for i in range(10)]  # deterministic
    single = datamodule(tokenizer_dir, replacement="single").datasets["train"]
    assert [single.synthesize(i, 0).text for i in range(10)] == [single.synthesize(i, 3).text for i in range(10)]
    # validation text never changes with the training epoch
    val = datamodule(tokenizer_dir).datasets["val"]
    assert val[(0, 0)] == val[(5, 0)]


def test_sampler_ranks_partition_the_epoch_and_group_by_length() -> None:
    data = list(range(103))
    lengths = [random.Random(i).randrange(1000) for i in data]
    ranks = [EpochSampler(data, num_replicas=4, rank=r, seed=3, lengths=lengths, batch_size=4) for r in range(4)]
    for sampler in ranks:
        sampler.set_epoch(5)
    keys = [list(sampler) for sampler in ranks]
    assert {len(k) for k in keys} == {26}
    assert all(epoch == 5 for k in keys for epoch, _ in k)
    assert set(i for k in keys for _, i in k) == set(data)
    # within a chunk of 50 batches, indices are sorted by length (longest first)
    first = [lengths[i] for _, i in keys[0]]
    assert first == sorted(first, reverse=True)
    ranks[0].set_epoch(6)
    assert list(ranks[0]) != keys[0]


def test_train_loader_shards_documents_over_data_parallel_ranks(tokenizer_dir: Path) -> None:
    module = datamodule(tokenizer_dir)
    shards = []
    for rank in range(3):
        module.trainer = SimpleNamespace(distributed_sampler_kwargs={"num_replicas": 3, "rank": rank})
        loader = module.train_dataloader()
        loader.sampler.set_epoch(4)
        shards.append([index for _, index in loader.sampler])
    module.trainer = None
    assert len({len(shard) for shard in shards}) == 1
    assert set().union(*shards) == set(range(len(module.datasets["train"])))


@pytest.mark.shared_data
def test_shared_corpus_every_span_is_labelled_and_every_token_scored_once(
    shared_corpus: Path, tokenizer_dir: Path
) -> None:
    module = DeIdDataModule(
        tokenizer=str(tokenizer_dir),
        data_dir=str(shared_corpus / "annotated"),
        mention_dirs=[str(shared_corpus / "mentions"), str(shared_corpus / "mentions-llm")],
        alias_files=[str(shared_corpus / "tag_aliases.json")],
        max_length=128,
        stride=32,
        scheme="BIO",
    )
    module.setup("fit")
    assert len(module.datasets["train"]) > 3000
    train, val, tokenizer = module.datasets["train"], module.datasets["val"], module.tokenizer
    for index in range(0, 400, 4):
        document = train.synthesize(index, epoch=2)
        encoding = tokenizer.encode(document.text)
        labels = token_labels(encoding.offsets, document.spans, module.label_set)
        for span in document.spans:
            covered = [labels[i] for i, (s, e) in enumerate(encoding.offsets) if s < span.end and e > span.start]
            assert covered and covered[0] == module.label_set.begin_id(module.label_set.entity_type(span.label))
    for index in range(40):
        windows = val[index]
        scored = [i for w in windows for i, l in zip(w["input_ids"], w["labels"]) if l != IGNORE_INDEX]
        assert tokenizer.decode(scored) == val.synthesize(index).text


class _Keys(torch.utils.data.Dataset):
    """Returns the sampler key itself."""

    def __len__(self) -> int:
        return 20

    def __getitem__(self, key: tuple[int, int]) -> tuple[int, int]:
        return key


def _loader() -> ResumableDataLoader:
    return ResumableDataLoader(_Keys(), batch_size=3, sampler=EpochSampler(_Keys(), seed=1), collate_fn=list)


def test_loader_state_continues_after_the_consumed_batches() -> None:
    loader = _loader()
    loader.sampler.set_epoch(2)
    iterator = iter(loader)
    seen = [next(iterator) for _ in range(3)]
    state = loader.state_dict()
    assert state == {"epoch": 2, "batches": 3}
    rest = list(iterator)
    assert all(epoch == 2 for batch in seen + rest for epoch, _ in batch)

    resumed = _loader()
    resumed.load_state_dict(state)
    assert list(resumed) == rest
    assert resumed.state_dict() == {"epoch": 2, "batches": len(resumed)}
    # a finished epoch resumes at the start of the next one
    after_epoch = _loader()
    after_epoch.load_state_dict(resumed.state_dict())
    next_epoch = list(after_epoch)
    assert len(next_epoch) == len(after_epoch) and {e for batch in next_epoch for e, _ in batch} == {3}
    # a skip saved for another epoch is dropped when the trainer moves the sampler on
    moved = _loader()
    moved.load_state_dict(state)
    moved.sampler.set_epoch(3)
    assert list(moved) == next_epoch


class _Recorder(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.seen: list[list[list[int]]] = []

    def training_step(self, batch, batch_idx):
        self.seen.append(batch["input_ids"].tolist())
        return (self.weight * batch["input_ids"].float().mean()).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.0)


class _Crash(Callback):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_end(self, trainer, *args) -> None:
        if trainer.global_step == self.step:
            raise KeyboardInterrupt  # stands in for a killed job; Lightning stops the fit


def _trainer(root: Path, callbacks: list[Callback]) -> Trainer:
    return Trainer(
        accelerator="cpu",
        max_epochs=2,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        default_root_dir=root,
        callbacks=callbacks,
    )


@pytest.mark.parametrize(("num_workers", "checkpoint_at"), [(0, "mid-epoch"), (2, "epoch-end")])
def test_resumed_run_sees_exactly_the_uninterrupted_samples(
    tokenizer_dir: Path, tmp_path: Path, num_workers: int, checkpoint_at: str
) -> None:
    options = {"batch_size": 16, "max_length": 48, "stride": 8, "num_workers": num_workers}
    full = _Recorder()
    _trainer(tmp_path / "full", []).fit(full, datamodule=datamodule(tokenizer_dir, **options))
    steps_per_epoch = len(full.seen) // 2
    assert steps_per_epoch >= 4 and full.seen[:steps_per_epoch] != full.seen[steps_per_epoch:]

    # killed in the middle of the second epoch; the last checkpoint is two steps earlier or at the end of epoch 0
    crash_step = steps_per_epoch + 3
    if checkpoint_at == "mid-epoch":
        saved_step = steps_per_epoch + 1
        checkpoints = ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_train_steps=saved_step, save_top_k=-1)
    else:
        saved_step = steps_per_epoch
        checkpoints = ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_epochs=1, save_top_k=-1)
    first = _Recorder()
    try:
        _trainer(tmp_path / "run", [checkpoints, _Crash(crash_step)]).fit(
            first, datamodule=datamodule(tokenizer_dir, **options)
        )
    except (KeyboardInterrupt, SystemExit):
        pass
    assert len(first.seen) == crash_step
    (checkpoint,) = sorted((tmp_path / "ckpt").glob(f"*step={saved_step}.ckpt"))
    resumed = _Recorder()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*not resumable.*")
        resumed_data = datamodule(tokenizer_dir, **options)
        _trainer(tmp_path / "run", []).fit(resumed, datamodule=resumed_data, ckpt_path=checkpoint)
    assert first.seen[:saved_step] + resumed.seen == full.seen


class _RankRecorder(_Recorder):
    def __init__(self, out: str) -> None:
        super().__init__()
        self.out = out

    def on_train_end(self) -> None:
        Path(self.out, f"rank{self.global_rank}.json").write_text(json.dumps(self.seen), encoding="utf-8")


@pytest.mark.slow
def test_ddp_ranks_see_their_own_shard(tokenizer_dir: Path, tmp_path: Path) -> None:
    options = {"batch_size": 8, "max_length": 48, "stride": 8}
    trainer = Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp_spawn",
        max_epochs=2,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        default_root_dir=tmp_path,
    )
    # not set up here: each spawned rank reads the corpus itself
    trainer.fit(_RankRecorder(str(tmp_path)), datamodule=DeIdDataModule(tokenizer=str(tokenizer_dir), **options))
    module = datamodule(tokenizer_dir, **options)
    for rank in range(2):
        module.trainer = SimpleNamespace(distributed_sampler_kwargs={"num_replicas": 2, "rank": rank})
        loader = module.train_dataloader()
        expected = []
        for epoch in range(2):
            loader.sampler.set_epoch(epoch)
            expected += _batches(loader)
        assert json.loads((tmp_path / f"rank{rank}.json").read_text(encoding="utf-8")) == expected


# ----------------------------------------------------------------------------------------------- splits and config


def test_split_is_stratified_by_case_type_and_reproducible() -> None:
    module = DeIdDataModule()
    documents = module.documents()
    counts = {name: Counter(doc.case_type for doc in docs) for name, docs in documents.items()}
    total = Counter(doc.case_type for docs in documents.values() for doc in docs)
    assert len(total) == 3
    for case_type, n in total.items():
        assert counts["train"][case_type] == round(0.8 * n)
        assert counts["val"][case_type] == round(0.1 * n)
    ids = {name: {doc.doc_id for doc in docs} for name, docs in documents.items()}
    assert not ids["train"] & ids["val"] and not ids["train"] & ids["test"] and not ids["val"] & ids["test"]
    assert {name: [d.doc_id for d in docs] for name, docs in DeIdDataModule().documents().items()} == {
        name: [d.doc_id for d in docs] for name, docs in documents.items()
    }
    other = split_documents([doc for docs in documents.values() for doc in docs], (0.8, 0.1, 0.1), seed=1)
    assert {d.doc_id for d in other["test"]} != ids["test"]


def test_explicit_dirs_replace_their_split() -> None:
    case_dir = next(p for p in sorted(DEMO_CORPUS.iterdir()) if p.is_dir())
    module = DeIdDataModule(test_dirs=[str(case_dir)], split=(0.9, 0.1, 0.0))
    documents = module.documents()
    assert {doc.case_type for doc in documents["test"]} == {case_dir.name}
    assert len(documents["test"]) == len(list(case_dir.rglob("*.md")))
    assert len(documents["train"]) + len(documents["val"]) == len(list(DEMO_CORPUS.rglob("*.md")))
    with pytest.raises(FileNotFoundError, match="missing"):
        DeIdDataModule(val_dirs=[str(case_dir / "missing")]).documents()


def test_a_local_hugging_face_jsonl_directory_can_be_the_test_set(tmp_path: Path) -> None:
    records = [
        {"id": "hf-1", "case_type": "fraud", "annotated": "피해자 <<<내국인이름>>>A<<</내국인이름>>>은 돈을 보냈다."},
        {"id": "hf-2", "case_type": "fraud", "annotated": "<<<내국인이름>>>B<<</내국인이름>>>가 왔다."},
    ]
    (tmp_path / "hf").mkdir()
    lines = [json.dumps(record, ensure_ascii=False) for record in records]
    (tmp_path / "hf" / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    module = DeIdDataModule(test_dirs=[str(tmp_path / "hf")])
    test = module.documents()["test"]
    assert [doc.doc_id for doc in test] == ["hf-1", "hf-2"]
    synthesized = module.synthesizer("test")(test[0])
    assert "<<<" not in synthesized.text and [span.label for span in synthesized.spans] == ["내국인이름"]


def test_head_nouns_follow_the_training_documents() -> None:
    """``corpus``: the head-noun labels come from the train split, and their spans leave out the head noun that
    ``inside`` spans cover (the text is the same)."""
    module = DeIdDataModule(head_nouns="corpus")
    documents = module.documents()
    outside = module.head_outside()
    assert outside == head_outside_labels(documents["train"], module.taxonomy) and "아파트" in outside
    inside = DeIdDataModule()
    assert inside.recipe.head_nouns == "inside" and inside.head_outside() == frozenset()
    cut = 0
    for annotated in documents["train"]:
        corpus_doc = module.synthesizer("val")(annotated)
        inside_doc = inside.synthesizer("val")(annotated)
        assert corpus_doc.text == inside_doc.text
        for ours, theirs in zip(corpus_doc.spans, inside_doc.spans):
            assert ours.start == theirs.start and ours.end <= theirs.end
            if ours.end < theirs.end:
                head = corpus_doc.text[ours.end : theirs.end].strip()
                assert ours.label in outside and ours.label.endswith(head), (ours, head)
                cut += 1
    assert cut > 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"split": (0.8, 0.1, 0.2)}, "summing to 1"),
        ({"max_length": 64, "stride": 64}, "stride"),
        ({"granularity": "tier"}, "granularity"),
        ({"scheme": "BIOES"}, "scheme"),
        ({"replacement": "never"}, "replacement"),
        ({"batch_size": 0}, "batch_size"),
        ({"head_nouns": "outside"}, "head_nouns"),
        ({"compose": 1.5}, "compose"),
        ({"published": ["x.jsonl"], "published_unscored": ["NNQ"]}, "NNQ is no Mecab-ko part of speech"),
        ({"published_unscored": ["NNP/인명"]}, "published_unscored needs published decisions"),
    ],
)
def test_bad_config_values_are_rejected(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DeIdDataModule(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"use_judgments": False}, "nothing to train on"),
        ({"mlm_probability": 1.5}, "mlm_probability"),
        ({"val_fraction": 1.0}, "val_fraction"),
        ({"max_length": 2}, "max_length"),
    ],
)
def test_bad_mlm_config_values_are_rejected(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MLMDataModule(**options)


def test_checkpoint_state_rejects_another_label_set() -> None:
    state = DeIdDataModule(granularity="category").state_dict()
    DeIdDataModule(granularity="category").load_state_dict(state)
    with pytest.warns(UserWarning, match="seed"):
        DeIdDataModule(granularity="category", seed=5).load_state_dict(state)
    with pytest.raises(ValueError, match="granularity"):
        DeIdDataModule(granularity="binary").load_state_dict(state)


# ----------------------------------------------------------------------------------------------- whole judgments

STATUTE = re.compile(r"제\d+조(?:의\d+)?(?: 제\d+항)?(?: 제\d+호)?")
RRN = re.compile(r"\d{6}-\d{7}")
JUDGE = re.compile(r"(?:판사|재판장|대법관)\s+([가-힣]{2,4})")


def tags_over(labels: list[tuple[tuple[int, int], int]], start: int, end: int) -> set[int]:
    """The tag ids of the tokens (``((start, end), tag)``) that overlap ``[start, end)``."""
    return {tag for (a, b), tag in labels if a < end and start < b}


def test_composed_training_documents_label_identifiers_and_never_legal_text(tokenizer_dir: Path) -> None:
    module = datamodule(tokenizer_dir, compose=0.5)
    train = module.datasets["train"]
    composer = train.synthesizer.composer
    composed = statutes = rrns = judges = 0
    for epoch in (0, 1):
        for index, doc in enumerate(train.items):
            out = train.synthesize(index, epoch)
            if not composer.picks(doc.doc_id, epoch):
                assert len(out.text) < len(doc.text) * 2
                continue
            composed += 1
            offsets = module.tokenizer.encode(out.text).offsets
            labels = list(zip(offsets, token_labels(offsets, out.spans, module.label_set)))
            for match in STATUTE.finditer(out.text):
                statutes += 1
                assert tags_over(labels, *match.span()) == {0}, out.text[match.start() - 20 : match.end()]
            for match in RRN.finditer(out.text):
                rrns += 1
                assert 0 not in tags_over(labels, *match.span()), match.group()
            for match in JUDGE.finditer(out.text):
                judges += 1
                assert tags_over(labels, *match.span(1)) == {0}, match.group()
            windows = train[(epoch, index)]
            assert len(windows) > 1  # longer than one 64-token window: the overlapping-window path
            assert sum(tag > 0 for w in windows for tag in w["labels"]) >= sum(tag > 0 for _, tag in labels)
    assert 0.3 * 2 * len(train) < composed < 0.7 * 2 * len(train)
    assert statutes > composed and rrns and judges


def test_composition_is_fixed_by_seed_and_epoch_and_only_in_training(tokenizer_dir: Path) -> None:
    module, again = datamodule(tokenizer_dir, compose=0.5), datamodule(tokenizer_dir, compose=0.5)
    plain, other_seed = datamodule(tokenizer_dir), datamodule(tokenizer_dir, compose=0.5, seed=1)
    train = module.datasets["train"]
    count = len(train)
    assert [train[(2, i)] for i in range(count)] == [again.datasets["train"][(2, i)] for i in range(count)]
    picked = {epoch: [train.synthesizer.composer.picks(doc.doc_id, epoch) for doc in train.items] for epoch in (0, 1)}
    assert picked[0] != picked[1] and any(picked[0]) and not all(picked[0])
    texts = {i: train.synthesize(i, 0).text for i in range(count) if not picked[0][i]}
    assert texts == {i: plain.datasets["train"].synthesize(i, 0).text for i in texts}  # the rest as without
    assert [train.synthesize(i, 0).text for i in range(count)] != [
        other_seed.datasets["train"].synthesize(i, 0).text for i in range(count)
    ]
    for name in ("val", "test"):  # evaluation fills facts paragraphs, as a recipe without compose
        ours, theirs = module.datasets[name], plain.datasets[name]
        assert [ours.synthesize(i) for i in range(len(ours))] == [theirs.synthesize(i) for i in range(len(theirs))]
    stored = module.state_dict()
    assert stored["compose"] == 0.5 and Recipe.from_dict(stored["recipe"]).compose == 0.5
    with pytest.warns(UserWarning, match="compose"):
        plain.load_state_dict(stored)


def test_mlm_pretraining_reads_whole_judgments_too(tokenizer_dir: Path) -> None:
    module = MLMDataModule(tokenizer=str(tokenizer_dir), max_length=64, val_fraction=0.0, compose=1.0)
    module.setup("fit")
    train = module.datasets["train"]
    for index in range(5):
        text = train.text(index, 1)
        assert len(text) > len(train.items[index].text) + 200 and JUDGE.search(text) and "<<<" not in text
        assert text == train.text(index, 1) != train.text(index, 2)


# ----------------------------------------------------------------------------------------------- MLM


def test_masking_rates_and_special_tokens() -> None:
    rng = random.Random(0)
    ids = [rng.randrange(5, 800) for _ in range(40000)]
    ids[::100] = [2] * len(ids[::100])  # [SEP] is never masked
    masked = mask_tokens(ids, random.Random(1), mask_token_id=4, vocab_size=800, special_ids=[0, 1, 2, 3, 4])
    chosen = [i for i, label in enumerate(masked["labels"]) if label != IGNORE_INDEX]
    assert 0.14 < len(chosen) / len(ids) < 0.16
    assert all(masked["labels"][i] == ids[i] for i in chosen)
    assert all(ids[i] != 2 for i in chosen)
    as_mask = sum(masked["input_ids"][i] == 4 for i in chosen) / len(chosen)
    unchanged = sum(masked["input_ids"][i] == ids[i] for i in chosen) / len(chosen)
    assert 0.77 < as_mask < 0.83 and 0.08 < unchanged < 0.12
    assert all(masked["input_ids"][i] not in (0, 1, 2, 3) for i in chosen)
    assert all(masked["input_ids"][i] == ids[i] for i in range(len(ids)) if masked["labels"][i] == IGNORE_INDEX)


def test_whole_morpheme_masking_masks_all_pieces_together(tokenizer: ThunderTokenizer) -> None:
    text = "피고인은 서울중앙지방법원에서 손해배상청구소송을 제기하였다. " * 40
    encoding = tokenizer.encode(text)
    groups = morpheme_groups(text, encoding.offsets)
    assert len(set(groups)) < len(groups), "some morphemes have several BPE pieces"
    special = [0, 1, 2, 3, 4]
    rng = random.Random(0)
    masked = mask_tokens(encoding.ids, rng, tokenizer.mask_token_id, tokenizer.vocab_size, special, 0.15, groups)
    chosen_by_group: dict[int, set[bool]] = {}
    for group, label in zip(groups, masked["labels"]):
        chosen_by_group.setdefault(group, set()).add(label != IGNORE_INDEX)
    assert all(len(flags) == 1 for flags in chosen_by_group.values())
    assert any(flags == {True} for flags in chosen_by_group.values())


def test_mlm_items_are_deterministic_and_resampled_per_epoch(tokenizer_dir: Path) -> None:
    module = MLMDataModule(tokenizer=str(tokenizer_dir), max_length=64, val_fraction=0.1, judgments="all")
    module.setup("fit")
    train, val = module.datasets["train"], module.datasets["val"]
    assert len(val) > 0 and len(train) + len(val) == len(list(DEMO_CORPUS.rglob("*.md")))
    assert train[(1, 3)] == train[(1, 3)]
    assert train[(1, 3)]["input_ids"] != train[(2, 3)]["input_ids"]  # new mentions and new masks
    assert val[(1, 0)] == val[(2, 0)]
    text = train.text(3, 1)
    assert "<<<" not in text


def test_mlm_pretraining_reads_only_the_train_split_by_default(tokenizer_dir: Path) -> None:
    deid = DeIdDataModule(tokenizer=str(tokenizer_dir))
    held_out = {doc.doc_id for name in ("val", "test") for doc in deid.documents()[name]}
    module = MLMDataModule(tokenizer=str(tokenizer_dir), val_fraction=0.0)
    module.setup("fit")
    seen = {item.doc_id for item in module.datasets["train"].items}
    assert seen == {doc.doc_id for doc in deid.documents()["train"]}
    assert held_out and not seen & held_out


def test_mlm_datamodule_packs_without_dropping_tokens(tokenizer_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    line = "대법원은 원심판결을 파기하고 사건을 환송한다.\n"
    (tmp_path / "corpus" / "a.txt").write_text(line * 30, encoding="utf-8")
    module = MLMDataModule(
        tokenizer=str(tokenizer_dir),
        text_paths=[str(tmp_path / "corpus")],
        max_length=32,
        batch_size=4,
        val_fraction=0.0,
        whole_morpheme=True,
    )
    module.setup("fit")
    dataset, tokenizer = module.datasets["train"], module.tokenizer
    assert len(dataset) > 96  # the 96 demo judgments of the train split plus the text chunks
    loader = module.train_dataloader()
    batch = next(iter(loader))
    keys = list(loader.sampler)[:4]
    items = [dataset[key] for key in keys]
    assert batch["input_ids"].shape[1] <= 32 and (batch["input_ids"][:, 0] == tokenizer.cls_token_id).all()
    # every token of the four documents is there, plus one [SEP] per document and one [CLS] per row
    rows = batch["input_ids"].shape[0]
    assert int(batch["attention_mask"].sum()) == sum(len(item["input_ids"]) + 1 for item in items) + rows
    labelled = batch["labels"] != IGNORE_INDEX
    assert 0 < labelled.sum() < batch["attention_mask"].sum()
    documents = [
        {"input_ids": [10, 11, 12, 13, 14], "labels": [-100] * 5},
        {"input_ids": [20, 21], "labels": [21, -100]},
    ]
    packed = PackingCollator(8, 1, 2, 0)(documents)
    assert packed["input_ids"].tolist() == [[1, 10, 11, 12, 13, 14, 2, 20], [1, 21, 2, 0, 0, 0, 0, 0]]
    assert packed["labels"].tolist()[1][:3] == [-100, -100, -100] and packed["labels"].tolist()[0][7] == 21


def test_mlm_text_share_sets_each_epochs_mix_and_walks_the_chunks_in_turn(tokenizer_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    lines = [f"제{n}조 원심판결을 파기하고 사건을 환송한다. {'가나다라' * 200}\n" for n in range(400)]
    (tmp_path / "corpus" / "a.txt").write_text("".join(lines), encoding="utf-8")
    options = dict(tokenizer=str(tokenizer_dir), text_paths=[str(tmp_path / "corpus")], max_length=64, val_fraction=0.0)
    everything = MLMDataModule(**options)
    everything.setup("fit")
    judgments = sum(not isinstance(item, str) for item in everything.datasets["train"].items)
    chunks = [item for item in everything.datasets["train"].items if isinstance(item, str)]
    assert len(chunks) > 3 * judgments  # without text_share the chunks outnumber the judgments
    module = MLMDataModule(**options, text_share=0.25)
    module.setup("fit")
    train = module.datasets["train"]
    slots = round(judgments * 0.25 / 0.75)
    assert len(train.items) == judgments and len(train) == judgments + slots
    assert not any(isinstance(item, str) for item in train.items)
    read = [train.text(judgments + j, epoch) for epoch in range(3) for j in range(slots)]
    assert read == [chunks[k % len(chunks)] for k in range(3 * slots)]  # in turn, across epochs
    assert train[(0, judgments)]["input_ids"] != train[(1, judgments)]["input_ids"]
    assert len(module.datasets["val"]) == len(everything.datasets["val"])
    for bad in (dict(text_share=1.0), dict(text_share=0.3, use_judgments=False)):
        with pytest.raises(ValueError, match="text_share"):
            MLMDataModule(**{**options, **bad})


# ----------------------------------------------------------------------------------------------- preview


def test_preview_prints_spans_from_a_lightningcli_config(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "trainer:\n  max_epochs: 1\nmodel:\n  class_path: some.Model\n"
        "data:\n  class_path: thunder.data.DeIdDataModule\n  init_args:\n    replacement: per_epoch\n    seed: 3\n",
        encoding="utf-8",
    )
    preview_command(str(config), n=2, colour=True)
    out = capsys.readouterr().out
    assert out.count("=== ") == 2
    assert "\033[" in out and "내국인이름" in out and "<<<" not in out
    span_lines = [line for line in out.splitlines() if line.startswith("  ") and "-" in line.split()[0]]
    assert span_lines and all(len(line.split()) >= 4 for line in span_lines)
    preview_command(str(config), n=2, colour=False, epoch=1)
    other_epoch = capsys.readouterr().out
    assert "\033[" not in other_epoch and "|내국인이름]" in other_epoch and other_epoch != out
    preview_command(str(config), n=1, split="test", colour=False)
    assert "(test, epoch 0" in capsys.readouterr().out
    bad = "data:\n  class_path: thunder.data.DeIdDataModule\n  init_args:\n    stride: 900\n"
    config.write_text(bad, encoding="utf-8")
    with pytest.raises(Exception, match="stride"):
        preview_command(str(config))


def test_preview_through_the_thunder_command(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from thunder.cli import main

    config = tmp_path / "config.yaml"
    config.write_text("data:\n  class_path: thunder.data.DeIdDataModule\n", encoding="utf-8")
    main(["data", "preview", "--config", str(config), "--n", "1", "--colour", "false"])
    assert capsys.readouterr().out.count("=== ") == 1


def test_published_words_of_the_unscored_parts_of_speech_are_not_scored(tokenizer_dir: Path, tmp_path: Path) -> None:
    import lzma

    from thunder.data.token_classification import unscored_labels
    from thunder.documents.corpus import held_out
    from thunder.synthesis.synthesizer import SynthesizedDocument

    tokenizer = ThunderTokenizer.from_pretrained(tokenizer_dir)
    label_set = LabelSet(Taxonomy.load(), "category", "IO")
    text = "피해자 홍길동에게 증인 김철수가 서울에서 말하였다."
    document = SynthesizedDocument("d", text, (EntitySpan(4, 7, "내국인이름", "A"),))
    offsets = tokenizer.encode(text).offsets
    scored = token_labels(offsets, document.spans, label_set)
    labels = unscored_labels(document, offsets, scored, frozenset({"NNP/인명"}))
    name = (text.index("김철수"), text.index("김철수") + 3)
    for (start, end), before, after in zip(offsets, scored, labels):
        touches_name = start < name[1] and name[0] < end
        assert after == (IGNORE_INDEX if touches_name else before), text[start:end]
    assert any(label not in (0, IGNORE_INDEX) for label in labels)  # the span's name stays scored as one

    ident = next(f"2021고단{n}" for n in range(10_000) if not held_out(f"2021고단{n}"))
    decision = "【이    유】 피고인 1은 증인 김철수에게 서울에서 돈을 건넸다.\n"
    path = tmp_path / "decisions.jsonl.xz"
    with lzma.open(path, "wt", encoding="utf-8") as file:
        file.write(json.dumps({"id": ident, "kind": "criminal", "date": "2021-03-04", "text": decision},
                              ensure_ascii=False) + "\n")  # fmt: skip
    module = datamodule(tokenizer_dir, published=[str(path)], published_share=0.5, published_unscored=["NNP/인명"])
    dataset = module.datasets["train"]
    assert [pool.unscored for pool in dataset.pools] == [frozenset({"NNP/인명"})]
    index = len(dataset.items)  # the first slot of the published decisions
    document = dataset.synthesize(index, 0)
    encoding = dataset.tokenizer.encode(document.text)
    (window,) = dataset[(0, index)]
    expected = unscored_labels(document, encoding.offsets, token_labels(encoding.offsets, document.spans,
                                                                         dataset.label_set), frozenset({"NNP/인명"}))
    assert window["labels"][1:-1] == expected and IGNORE_INDEX in expected
    assert module.state_dict()["recipe"]["published_unscored"] == ["NNP/인명"]
