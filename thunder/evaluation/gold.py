"""Documents with gold entity spans for ``thunder evaluate``: a training recipe's judgments filled once as the data
module fills its test set (:func:`load_documents`, so ``thunder evaluate`` and ``thunder test`` read the same
documents), or a JSONL file of ``{"text": ..., "spans": [[start, end, label], ...], "id": ...}`` (:func:`read_gold`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from thunder.data import SPLITS, Filler, Recipe, read_corpus
from thunder.documents.reviewed import read_records
from thunder.synthesis.synthesizer import EntitySpan, SynthesizedDocument
from thunder.taxonomy import Taxonomy, UnknownTagError


def read_gold(path: str | Path, taxonomy: Taxonomy) -> Iterator[SynthesizedDocument]:
    """Documents with gold spans from a JSONL file of ``{"text": ..., "spans": [[start, end, label], ...], "id": ...}``
    (the review page's download; read by :func:`thunder.documents.reviewed.read_records`, which checks every span). Labels may
    be raw tags; they are resolved through the taxonomy. Errors name the file and line."""
    for record in read_records(path):
        spans = []
        for span in record.spans:
            try:
                label = taxonomy.resolve(span.label).label.name
            except UnknownTagError as error:
                raise ValueError(f"{record.source}:{span.line}: {error}") from None
            entity = span.entity if span.entity is not None else f"{span.label}:{record.text[span.start : span.end]}"
            spans.append(EntitySpan(span.start, span.end, label, entity))
        yield SynthesizedDocument(record.id, record.text, tuple(spans))


def load_documents(
    recipe: Recipe,
    taxonomy: Taxonomy,
    split: str | None = None,
    mentions: str = "seen",
    limit: int | None = None,
) -> Iterator[SynthesizedDocument]:
    """The judgments of a recipe's ``split`` (None: every one of its ``data_dir``) filled once as the data module fills
    its validation and test sets (:meth:`thunder.data.Filler.synthesizer`), so ``thunder evaluate`` and ``thunder
    test`` read the same documents: from the training part of the mention lists (``seen``) or only from the part
    ``mention_holdout`` held back, with the unseen name family (``unseen``)."""
    if mentions not in ("seen", "unseen"):
        raise ValueError(f"mentions must be 'seen' or 'unseen', got {mentions!r}")
    if mentions == "unseen" and not recipe.mention_holdout:
        raise ValueError("unseen mentions need the training run's mention_holdout (e.g. 0.1): without one, every"
                         " list entry was seen in training")
    filler = Filler(recipe, taxonomy)
    if split is None:
        annotated = read_corpus([recipe.corpus])
        head_outside: frozenset[str] | None = filler.head_outside(annotated)
    else:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        annotated, head_outside = filler.documents()[split], None
    synthesizer = filler.synthesizer("heldout" if mentions == "unseen" else "train", head_outside)
    for doc in annotated[:limit]:
        yield synthesizer(doc, epoch=0)
