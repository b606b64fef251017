"""thunder.data.shards: corpus -> LitData token shards (thunder data prepare) -> masked blocks for MLMDataModule."""

from __future__ import annotations

import json
import lzma
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from litdata import StreamingDataLoader, StreamingDataset, TokensLoader
from litdata.streaming.writer import BinaryWriter
from litdata.utilities.env import _DistributedEnv

from thunder.data import DEMO_CORPUS, DEMO_TOKENIZER, MLMDataModule, morpheme_groups
from thunder.data.shards import (
    CONTINUES,
    MaskedBlocks,
    PrepareOptions,
    collate_blocks,
    held_out,
    mask_block,
    prepare_corpus,
    read_manifest,
    tokenize_span,
)
from thunder.documents.annotation import iter_corpus
from thunder.documents.corpus import iter_documents, plan
from thunder.language.tokenizer import ThunderTokenizer

VAL_FRACTION = 0.25


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo judgments as a text file (blank-line separated), a JSONL file and annotated .md files."""
    root = tmp_path_factory.mktemp("corpus")
    texts = [doc.text for doc in iter_corpus(DEMO_CORPUS)]
    (root / "a.txt").write_text("\n\n".join(text.replace("\n\n", "\n") for text in texts[:50]) + "\n", encoding="utf-8")
    with open(root / "b.jsonl", "w", encoding="utf-8") as file:
        file.writelines(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in texts[50:100])
    records = [json.dumps({"id": f"c{i}", "text": text}, ensure_ascii=False) + "\n" for i, text in enumerate(texts[100:110])]
    (root / "c.jsonl.xz").write_bytes(lzma.compress("".join(records).encode("utf-8")))  # read whole, held-out ids out
    for path in sorted(DEMO_CORPUS.rglob("*.md"))[-5:]:  # not among the first 110: no duplicate documents
        (root / path.name).write_bytes(path.read_bytes())
    return root


@pytest.fixture(scope="module")
def prepared(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("prepared")
    options = PrepareOptions(str(DEMO_TOKENIZER), max_chars=500, val_fraction=VAL_FRACTION)
    prepare_corpus([corpus], out, options, num_workers=2, chunk_bytes="16KB", split_bytes=20_000)
    return out


def stream(directory: Path) -> np.ndarray:
    """Every stored token of a split, in chunk order."""
    dataset = StreamingDataset(str(directory), item_loader=TokensLoader(block_size=1), shuffle=False)
    return np.array([int(dataset[i][0]) for i in range(len(dataset))], dtype=np.int64)


@pytest.mark.slow  # LitData optimize starts worker processes: about a minute on 2 busy cores
def test_shards_hold_every_document_exactly_once(
    prepared: Path, corpus: Path, tokenizer: ThunderTokenizer
) -> None:
    manifest = read_manifest(prepared, DEMO_TOKENIZER)
    assert manifest["bytes"] == sum(path.stat().st_size for path in corpus.iterdir())  # on disk, xz compressed
    expected = list(iter_documents([corpus]))
    decoded: dict[str, list[str]] = {}
    for split in ("train", "val"):
        values = stream(prepared / split)
        assert manifest["tokens"][split] >= len(values) > 0  # blocks never cross a chunk's end: nothing is missing
        ids = values & (CONTINUES - 1)
        cuts = np.flatnonzero(ids == tokenizer.sep_token_id)
        decoded[split] = [tokenizer.decode(part.tolist()) for part in np.split(ids, cuts + 1)[:-1]]
        assert all(held_out(text, VAL_FRACTION) == (split == "val") for text in decoded[split])
    # workers interleave chunks: compare as multisets; the documents come back exactly, whitespace included
    assert sorted(decoded["train"] + decoded["val"]) == sorted(expected)
    assert 0 < len(decoded["val"]) < len(decoded["train"])


@pytest.mark.slow  # LitData optimize starts worker processes: about a minute on 2 busy cores
def test_masked_blocks_are_deterministic_and_mask_whole_morphemes(prepared: Path, tokenizer: ThunderTokenizer) -> None:
    dataset = MaskedBlocks(prepared / "train", 64, tokenizer, seed=3, whole_morpheme=True)
    again = MaskedBlocks(prepared / "train", 64, tokenizer, seed=3, whole_morpheme=True)
    raw = StreamingDataset(str(prepared / "train"), item_loader=TokensLoader(block_size=63), shuffle=False)
    for index in (0, 5, len(dataset) - 1):
        item = dataset[index]
        assert item["input_ids"].shape == (64,) and item["input_ids"][0] == tokenizer.cls_token_id
        assert torch.equal(item["input_ids"], again[index]["input_ids"])
        block = raw[index].numpy()
        ids = block & (CONTINUES - 1)
        labels = item["labels"][1:].numpy()
        chosen = labels != -100
        assert (labels[chosen] == ids[chosen]).all()
        group = np.cumsum((block & CONTINUES) == 0)
        special = np.isin(ids, [0, 1, 2, 3, 4])
        for g in np.unique(group[chosen]):  # a chosen morpheme is chosen whole (its special tokens excepted)
            assert chosen[(group == g) & ~special].all()


def test_tokenize_span_stores_documents_with_morpheme_flags(corpus: Path, tokenizer: ThunderTokenizer) -> None:
    spans = plan([corpus / "b.jsonl"], split_bytes=30_000)
    options = PrepareOptions(str(DEMO_TOKENIZER), max_chars=300, batch_chars=5_000, val_fraction=VAL_FRACTION)
    stored: dict[str, list[np.ndarray]] = {"train": [], "val": []}
    for split in stored:
        for span in spans:
            for values in tokenize_span(span, options, split):
                ids = values.numpy().astype(np.int64)
                assert ids[-1] == tokenizer.sep_token_id  # a batch holds whole documents
                cuts = np.flatnonzero((ids & (CONTINUES - 1)) == tokenizer.sep_token_id)
                stored[split] += np.split(ids, cuts + 1)[:-1]
    parts = stored["train"] + stored["val"]
    decoded = [tokenizer.decode((part[:-1] & (CONTINUES - 1)).tolist()) for part in parts]
    assert sorted(decoded) == sorted(iter_documents([corpus / "b.jsonl"])) and stored["val"]
    short = next(i for i, text in enumerate(decoded) if len(text) <= 300)  # encoded in one Mecab call
    groups = morpheme_groups(decoded[short], tokenizer.encode(decoded[short]).offsets)
    begins = [i == 0 or groups[i] != groups[i - 1] for i in range(len(groups))]
    assert ((parts[short][:-1] & CONTINUES) == 0).tolist() == begins and not all(begins)


def test_mask_block_rates() -> None:
    rng = np.random.default_rng(0)
    values = rng.integers(0, 1000, 200_000)
    input_ids, labels = mask_block(values, rng, mask_token_id=4, vocab_size=1000, special_ids=[0, 1, 2, 3, 4])
    chosen = labels != -100
    assert abs(chosen.mean() - 0.15 * 995 / 1000) < 0.005
    assert abs((input_ids[chosen] == 4).mean() - 0.8) < 0.01
    replaced = chosen & (input_ids != 4) & (input_ids != values)
    assert abs(replaced.sum() / chosen.sum() - 0.1) < 0.01
    assert not np.isin(input_ids[replaced], [0, 1, 2, 3, 4]).any() and input_ids.max() < 1000
    assert (labels[np.isin(values, [0, 1, 2, 3, 4])] == -100).all()


@pytest.mark.slow  # LitData optimize starts worker processes: about a minute on 2 busy cores
def test_loader_resumes_exactly_mid_epoch(prepared: Path, tokenizer: ThunderTokenizer) -> None:
    def loader() -> StreamingDataLoader:
        dataset = MaskedBlocks(prepared / "train", 32, tokenizer, seed=1)
        return StreamingDataLoader(dataset, batch_size=4, num_workers=2, collate_fn=collate_blocks)

    first = loader()
    batches = iter(first)
    for _ in range(3):
        next(batches)
    state = first.state_dict()
    rest = [batch["input_ids"] for batch in batches]
    resumed = loader()
    resumed.load_state_dict(state)
    again = [batch["input_ids"] for batch in resumed]
    assert len(again) == len(rest) > 0
    assert all(torch.equal(a, b) for a, b in zip(rest, again))


def chunk_files_held(directory: Path) -> tuple[int, int]:
    """Chunk files of ``directory`` this process has open (``/proc/self/fd``) and memory-mapped (``/proc/self/maps``)."""
    prefix = f"{directory}/"
    opened = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            opened.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the descriptor that listed the folder, closed since
            continue
    with open("/proc/self/maps", encoding="utf-8") as maps:
        mapped = {line.split()[-1] for line in maps if len(line.split()) >= 6}
    return tuple(sum(p.startswith(prefix) and p.endswith(".bin") for p in paths) for paths in (opened, mapped))


@pytest.mark.skipif(not Path("/proc/self/maps").is_file(), reason="counts open and mapped files through Linux /proc")
def test_reader_releases_each_chunk_once_read(tmp_path: Path, tokenizer: ThunderTokenizer) -> None:
    writer = BinaryWriter(str(tmp_path), chunk_bytes=6000, item_loader=TokensLoader())  # 1,000 tokens a chunk
    rng = np.random.default_rng(0)
    for index in range(40):
        writer[index] = torch.from_numpy(rng.integers(5, tokenizer.vocab_size, 1000).astype(np.int32))
    writer.done()
    writer.merge()
    assert len(list(tmp_path.glob("*.bin"))) == 40
    loader = StreamingDataLoader(MaskedBlocks(tmp_path, 64, tokenizer, seed=1), batch_size=4, collate_fn=collate_blocks)
    held, read = [], Counter()
    for batch in loader:  # LitData 0.2.44's own TokensLoader ends holding all 40 chunks (open and mapped)
        held.append(chunk_files_held(tmp_path))
        originals = torch.where(batch["labels"] != -100, batch["labels"], batch["input_ids"])[:, 1:]
        read.update(tuple(row.tolist()) for row in originals)
    assert max(fds for fds, _ in held) <= 2 and max(maps for _, maps in held) <= 2
    raw = StreamingDataset(str(tmp_path), item_loader=TokensLoader(block_size=63), shuffle=False)  # holds them all
    every = Counter(tuple(raw[i].tolist()) for i in range(len(raw)))
    assert read == every and sum(every.values()) == 600  # 15 blocks of 63 tokens a chunk, each read once, intact


@pytest.mark.slow  # LitData optimize starts worker processes: about a minute on 2 busy cores
def test_ranks_read_distinct_blocks(prepared: Path, tokenizer: ThunderTokenizer) -> None:
    raw = StreamingDataset(str(prepared / "train"), item_loader=TokensLoader(block_size=31), shuffle=False)
    blocks = ((raw[i].numpy() & (CONTINUES - 1)).tolist() for i in range(len(raw)))
    every = Counter((tokenizer.cls_token_id, *block) for block in blocks)
    read: Counter[tuple[int, ...]] = Counter()
    for rank in range(2):
        dataset = MaskedBlocks(prepared / "train", 32, tokenizer, seed=1)
        dataset.distributed_env = _DistributedEnv(world_size=2, global_rank=rank, num_nodes=1)
        loader = StreamingDataLoader(dataset, batch_size=2, collate_fn=collate_blocks)
        originals = (torch.where(b["labels"] != -100, b["labels"], b["input_ids"]) for b in loader)
        rows = [tuple(row.tolist()) for batch in originals for row in batch]
        assert len(rows) >= len(raw) // 2 - 2
        read.update(rows)
    assert not read - every  # no block read twice (some blocks are equal: compare as multisets)


@pytest.mark.slow  # LitData optimize starts worker processes: about a minute on 2 busy cores
def test_mlm_datamodule_reads_prepared_shards(prepared: Path, tmp_path: Path) -> None:
    module = MLMDataModule(tokenizer=str(DEMO_TOKENIZER), prepared_dir=str(prepared), max_length=128, batch_size=3)
    module.setup("fit")
    batch = next(iter(module.train_dataloader()))
    assert batch["input_ids"].shape == batch["labels"].shape == batch["attention_mask"].shape == (3, 128)
    val = next(iter(module.val_dataloader()))
    assert val["input_ids"].shape[1] == 128
    other = tmp_path / "other-tokenizer"
    other.mkdir()
    for path in DEMO_TOKENIZER.iterdir():
        (other / path.name).write_bytes(path.read_bytes())
    (other / "tokenizer.json").write_text((DEMO_TOKENIZER / "tokenizer.json").read_text() + " ", encoding="utf-8")
    with pytest.raises(ValueError, match="made with another tokenizer"):
        MLMDataModule(tokenizer=str(other), prepared_dir=str(prepared)).setup("fit")
    with pytest.raises(FileNotFoundError, match="not a complete `thunder data prepare` output"):
        MLMDataModule(prepared_dir=str(tmp_path)).setup("fit")


def test_composing_prepared_shards_is_refused(tmp_path: Path) -> None:
    # shards hold the texts as prepared: compose would silently do nothing there
    with pytest.raises(ValueError, match="set compose to 0 with prepared_dir"):
        MLMDataModule(tokenizer=str(DEMO_TOKENIZER), prepared_dir=str(tmp_path), compose=0.5)


@pytest.mark.slow  # three short Trainer runs over prepared shards
def test_fit_resumed_mid_epoch_sees_exactly_the_remaining_batches(prepared: Path, tmp_path: Path) -> None:
    from lightning.pytorch import Callback, Trainer
    from lightning.pytorch.callbacks import ModelCheckpoint

    from thunder.model.modules import MaskedLM

    class Seen(Callback):
        def __init__(self) -> None:
            self.batches: list[torch.Tensor] = []

        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
            self.batches.append(batch["input_ids"].clone())

    def fit(steps: int, ckpt_path: str | None = None, checkpoint: bool = False) -> Seen:
        seen = Seen()
        callbacks: list[Callback] = [seen]
        if checkpoint:
            callbacks.append(ModelCheckpoint(dirpath=tmp_path / "ckpt", filename="last", every_n_train_steps=1,
                                             enable_version_counter=False))  # fmt: skip
        data = MLMDataModule(tokenizer=str(DEMO_TOKENIZER), prepared_dir=str(prepared), max_length=32, batch_size=4,
                             num_workers=1, whole_morpheme=True)  # fmt: skip
        trainer = Trainer(accelerator="cpu", max_steps=steps, logger=False, enable_checkpointing=checkpoint,
                          callbacks=callbacks, enable_progress_bar=False, enable_model_summary=False,
                          limit_val_batches=0, num_sanity_val_steps=0, default_root_dir=tmp_path)  # fmt: skip
        trainer.fit(MaskedLM(backbone="tiny", lr=1e-3), datamodule=data, ckpt_path=ckpt_path)
        return seen

    whole = fit(8)
    fit(3, checkpoint=True)
    resumed = fit(8, ckpt_path=str(tmp_path / "ckpt" / "last.ckpt"))
    assert len(resumed.batches) == 5
    assert all(torch.equal(a, b) for a, b in zip(whole.batches[3:], resumed.batches))
