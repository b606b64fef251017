"""Token labels of a synthesized document, its overlapping windows, and the collator that pads them into batches.

A token is inside an entity when its character range overlaps the entity's span (IO, or BIO where the first token of
a span is ``B-``). Documents longer than ``max_length`` become overlapping windows (``[CLS]`` + tokens + ``[SEP]``,
consecutive windows share ``stride`` tokens) so no text is ever dropped. For validation and testing each token is
scored once: a token of an overlap gets label -100 in every window but the one that owns it (overlaps are split
halfway, so each token is scored in the window where it has the most context).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from thunder.language.tokenizer import Encoding, ThunderTokenizer, window_ranges
from thunder.synthesis.synthesizer import EntitySpan
from thunder.taxonomy import LabelSet

IGNORE_INDEX = -100

Example = dict[str, list[int]]  # "input_ids" and "labels" of one window / one masked document, no padding


def token_labels(offsets: Sequence[tuple[int, int]], spans: Sequence[EntitySpan], label_set: LabelSet) -> list[int]:
    """Tag id of every token: inside a span when its character range overlaps it (the first such token begins it).

    ``offsets`` are the tokens' character ranges in the text the ``spans`` point into; tokens outside every span
    get ``O`` (id 0). Spans must not overlap each other.
    """
    labels = [0] * len(offsets)
    for span in sorted(spans, key=lambda span: (span.start, span.end)):
        if span.end <= span.start:
            continue
        entity_type = label_set.entity_type(span.label)
        begin, inside = label_set.begin_id(entity_type), label_set.inside_id(entity_type)
        first = True
        for index in range(_first_token_at_or_after(offsets, span.start), len(offsets)):
            start, end = offsets[index]
            if start >= span.end:
                break
            if end > span.start or (start == end and start >= span.start):
                labels[index] = begin if first else inside
                first = False
    return labels


def _first_token_at_or_after(offsets: Sequence[tuple[int, int]], position: int) -> int:
    """Index of the first token whose end lies after ``position`` (binary search; offsets are ordered)."""
    low, high = 0, len(offsets)
    while low < high:
        middle = (low + high) // 2
        start, end = offsets[middle]
        if max(end, start + 1) <= position:
            low = middle + 1
        else:
            high = middle
    return low


def window_examples(
    encoding: Encoding,
    labels: Sequence[int],
    tokenizer: ThunderTokenizer,
    max_length: int,
    stride: int,
    score_once: bool,
) -> list[Example]:
    """``[CLS] tokens [SEP]`` windows of one document with their labels (-100 on special tokens).

    With ``score_once`` (validation/test) tokens owned by another window are -100 too, so every token is scored
    exactly once over the document's windows.
    """
    examples = []
    for start, end, own_start, own_end in window_ranges(len(encoding.ids), max_length, stride):
        window_labels = list(labels[start:end])
        if score_once:
            for position in range(start, end):
                if not own_start <= position < own_end:
                    window_labels[position - start] = IGNORE_INDEX
        examples.append(
            {
                "input_ids": [tokenizer.cls_token_id, *encoding.ids[start:end], tokenizer.sep_token_id],
                "labels": [IGNORE_INDEX, *window_labels, IGNORE_INDEX],
            }
        )
    return examples


@dataclass
class TokenCollator:
    """Flattens items (lists of windows) and right-pads them: ``input_ids``, ``attention_mask``, ``labels`` (B, T)."""

    pad_token_id: int
    pad_to_multiple_of: int | None = None

    def __call__(self, items: Sequence[list[Example] | Example]) -> dict[str, torch.Tensor]:
        examples = [example for item in items for example in (item if isinstance(item, list) else [item])]
        length = max((len(example["input_ids"]) for example in examples), default=0)
        if self.pad_to_multiple_of:
            length = -(-length // self.pad_to_multiple_of) * self.pad_to_multiple_of
        input_ids = torch.full((len(examples), length), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(examples), length), dtype=torch.long)
        labels = torch.full((len(examples), length), IGNORE_INDEX, dtype=torch.long)
        for row, example in enumerate(examples):
            size = len(example["input_ids"])
            input_ids[row, :size] = torch.tensor(example["input_ids"], dtype=torch.long)
            attention_mask[row, :size] = 1
            labels[row, :size] = torch.tensor(example["labels"], dtype=torch.long)
        return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}
