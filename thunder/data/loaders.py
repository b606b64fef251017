"""Deterministic, resumable loading: datasets keyed by ``(epoch, index)``, their sampler and a checkpointable loader.

One dataset item is one document. The training sampler, :class:`EpochSampler`, yields ``(epoch, index)`` keys, so the
epoch reaches the dataset inside any DataLoader worker without shared state: a document's text depends only on
``(seed, epoch, doc_id)``, identical with any number of workers and on every DDP/FSDP rank (the sampler is a
``DistributedSampler`` that Lightning keeps and calls ``set_epoch`` on). :class:`ResumableDataLoader` implements
Lightning's ``state_dict``/``load_state_dict`` loader protocol: a checkpoint records the epoch and the number of
batches already consumed, and a run resumed from a mid-epoch checkpoint continues with exactly the next batch it would
have seen.
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Sequence

import torch
from lightning.pytorch import LightningDataModule
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from thunder.documents.annotation import AnnotatedDocument
from thunder.language.tokenizer import ThunderTokenizer
from thunder.seeds import stable_seed
from thunder.synthesis.composition import ComposingSynthesizer
from thunder.synthesis.synthesizer import Synthesizer


class EpochDataset(Dataset):
    """Annotated judgments (synthesized per epoch) or plain texts, one item each, tokenized by ``tokenizer``.

    Training takes the epoch from the sampler key, evaluation fixes it: keys are ``(epoch, index)`` pairs (see
    :class:`EpochSampler`) or plain indices, which use :meth:`set_epoch`'s epoch; a fixed ``epoch`` (validation/test)
    overrides both.
    """

    def __init__(
        self,
        items: Sequence[AnnotatedDocument | str],
        synthesizer: Synthesizer | ComposingSynthesizer | None,
        tokenizer: ThunderTokenizer,
        epoch: int | None,
    ) -> None:
        self.items, self.synthesizer, self.tokenizer = list(items), synthesizer, tokenizer
        self.fixed_epoch = epoch
        self.epoch = epoch or 0

    def __len__(self) -> int:
        return len(self.items)

    def set_epoch(self, epoch: int) -> None:
        """Epoch used for plain integer indices (ignored when the epoch is fixed)."""
        if self.fixed_epoch is None:
            self.epoch = epoch

    def resolve(self, key: int | tuple[int, int]) -> tuple[int, int]:
        """``(epoch, index)`` of a sampler key."""
        epoch, index = (int(key[0]), int(key[1])) if isinstance(key, (tuple, list)) else (self.epoch, int(key))
        return (epoch if self.fixed_epoch is None else self.fixed_epoch), index


def epoch_slots(documents: int, pools: Sequence[tuple[int, float | None]]) -> tuple[int, list[int]]:
    """``(train-split documents, slots of each pool)`` of a training epoch of ``documents`` train-split judgments and
    pools of ``(size, share)``: a pool makes ``share`` of the epoch's documents (None: each of its documents once);
    pools whose shares make the whole epoch (or no train split) are read alone, each document once."""
    shared = sum(share for _, share in pools if share is not None)
    if shared >= 1 or documents == 0:
        return 0, [size for size, _ in pools]
    return documents, [size if share is None else max(1, round(documents * share / (1 - shared))) for size, share in pools]


def pool_turn(epoch: int, slots: int, slot: int, size: int) -> tuple[int, int]:
    """``(document, filling)`` of ``slot`` of a pool of ``size`` documents read ``slots`` a training epoch, in turn
    across epochs: the ``k = epoch * slots + slot``-th read is document ``k % size``, its ``k // size``-th reading."""
    turn = epoch * slots + slot
    return turn % size, turn // size


class EpochSampler(DistributedSampler):
    """Deterministic per-epoch order of ``(epoch, index)`` keys; a ``DistributedSampler`` so Lightning keeps it.

    The order depends only on ``(seed, epoch)``; each of ``num_replicas`` ranks takes every ``num_replicas``-th key
    (padded to equal length, like ``DistributedSampler``). With ``lengths`` and ``batch_size``, keys are grouped
    into batches of similar length: the shuffled order is cut into chunks of ``50 * batch_size`` that are sorted by
    length (longest first), so padding stays small while batches still vary from epoch to epoch.
    :meth:`skip` makes the next iteration start after the first ``n`` keys (mid-epoch resumption).
    """

    GROUP_FACTOR = 50

    def __init__(
        self,
        dataset: Dataset,
        num_replicas: int = 1,
        rank: int = 0,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
        lengths: Sequence[int] | None = None,
        batch_size: int = 1,
    ) -> None:
        super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
        if lengths is not None and len(lengths) != len(dataset):  # type: ignore[arg-type]
            size = len(dataset)  # type: ignore[arg-type]
            raise ValueError(f"lengths has {len(lengths)} entries for a dataset of {size}")
        self.lengths = list(lengths) if lengths is not None else None
        self.batch_size = batch_size
        self._skip: tuple[int, int] | None = None  # (epoch, keys)

    def skip(self, n: int, epoch: int) -> None:
        """Leave out the first ``n`` keys of the next iteration if it is one of ``epoch`` (only that iteration)."""
        self._skip = (epoch, n)

    def indices(self) -> list[int]:
        """This rank's dataset indices for the current epoch, in order."""
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(stable_seed("sampler", self.seed, self.epoch) % 2**63)
            order = torch.randperm(n, generator=generator).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[: self.total_size]
        elif order:
            padding = self.total_size - len(order)
            order += (order * math.ceil(padding / len(order)))[:padding]
        mine = order[self.rank : self.total_size : self.num_replicas]
        if self.lengths is not None:
            lengths = self.lengths
            chunk = self.GROUP_FACTOR * self.batch_size
            mine = [
                index
                for begin in range(0, len(mine), chunk)
                for index in sorted(mine[begin : begin + chunk], key=lambda i: -lengths[i])
            ]
        return mine

    def __iter__(self) -> Iterator[tuple[int, int]]:  # type: ignore[override]
        epoch, skip = self.epoch, self._skip
        self._skip = None
        start = skip[1] if skip is not None and skip[0] == epoch else 0
        return iter([(epoch, index) for index in self.indices()[start:]])


class ResumableDataLoader(DataLoader):
    """A DataLoader over an :class:`EpochSampler` that Lightning can checkpoint mid-epoch.

    ``state_dict()`` is ``{"epoch", "batches"}``: the sampler's epoch and how many batches of it were handed out.
    ``load_state_dict`` makes the next iteration continue after those batches (or start the next epoch when the
    saved one was complete). Lightning calls both through its loader-state protocol (fit loop checkpoints).
    """

    def __init__(self, dataset: Dataset, *args: Any, **kwargs: Any) -> None:
        super().__init__(dataset, *args, **kwargs)
        if not isinstance(self.sampler, EpochSampler):
            raise TypeError("ResumableDataLoader needs an EpochSampler as its sampler")
        self._epoch = self.sampler.epoch  # epoch of the current (or last) iteration
        self._batches = 0  # batches handed out in it
        self._resume: tuple[int, int] | None = None  # (epoch, batches) to continue after

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        # A generator, so nothing runs before the first ``next``: workers start and the sampler reads its epoch
        # only then, after Lightning's ``set_epoch`` (Lightning creates the iterator before a resumed run's epoch
        # is set).
        sampler: EpochSampler = self.sampler  # type: ignore[assignment]
        self._epoch = sampler.epoch
        resume, self._resume = self._resume, None
        self._batches = resume[1] if resume is not None and resume[0] == self._epoch else 0
        for batch in super().__iter__():
            self._batches += 1
            yield batch

    def state_dict(self) -> dict[str, int]:
        """Epoch of the current iteration and the number of its batches handed out so far."""
        return {"epoch": self._epoch, "batches": self._batches}

    def load_state_dict(self, state: dict[str, int]) -> None:
        """Continue after ``state["batches"]`` batches of epoch ``state["epoch"]`` on the next iteration."""
        sampler: EpochSampler = self.sampler  # type: ignore[assignment]
        epoch, batches = int(state["epoch"]), int(state["batches"])
        if batches >= len(self):
            epoch, batches = epoch + 1, 0
        assert self.batch_size is not None
        sampler.set_epoch(epoch)
        sampler.skip(batches * self.batch_size, epoch)
        self._resume = (epoch, batches)


def loader_generator(seed: int) -> torch.Generator:
    """A loader's own generator for its worker seeds: starting an iteration then draws nothing from the global
    generator, which only dropout uses, so a run resumed with the same random state continues it exactly."""
    return torch.Generator().manual_seed(stable_seed("loader", seed) % 2**63)


def distributed_context(module: LightningDataModule) -> tuple[int, int]:
    """``(replicas, rank)`` of data parallelism under the attached trainer (FSDP/DDP/model-parallel), ``(1, 0)``."""
    trainer = module.trainer
    kwargs = trainer.distributed_sampler_kwargs if trainer is not None else None
    if not kwargs:
        return 1, 0
    return max(int(kwargs["num_replicas"]), 1), int(kwargs["rank"])


def training_loader(
    module: LightningDataModule,
    dataset: Dataset,
    batch_size: int,
    num_workers: int,
    collate_fn: Any,
    seed: int,
    lengths: Sequence[int] | None = None,
) -> ResumableDataLoader:
    """The resumable training loader of ``dataset``: this rank's :class:`EpochSampler` order under the module's
    trainer, length-grouped with ``lengths``."""
    replicas, rank = distributed_context(module)
    sampler = EpochSampler(
        dataset, num_replicas=replicas, rank=rank, seed=seed, lengths=lengths, batch_size=batch_size
    )  # fmt: skip
    return ResumableDataLoader(
        dataset, batch_size=batch_size, sampler=sampler, num_workers=num_workers, collate_fn=collate_fn,
        generator=loader_generator(seed),
    )  # fmt: skip


def evaluation_loader(
    dataset: Dataset, batch_size: int, num_workers: int, collate_fn: Any, seed: int
) -> DataLoader | list:
    """A loader over ``dataset`` in order (``[]`` when it is empty: Lightning skips the loop)."""
    if len(dataset) == 0:  # type: ignore[arg-type]
        return []
    return DataLoader(
        dataset, batch_size=batch_size, num_workers=num_workers, collate_fn=collate_fn, generator=loader_generator(seed)
    )
