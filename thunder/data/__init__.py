"""Training data: a recipe of annotated judgments and mentions -> synthesized documents -> token labels -> batches.

One module per concept, as litgpt keeps one data module per file:

- :mod:`~thunder.data.recipe`: :class:`Recipe` (corpus, split, mention lists, taxonomy, seeds: what a checkpoint keeps
  and ``thunder evaluate`` reads) and :class:`Filler` (its documents and synthesizers on one taxonomy);
- :mod:`~thunder.data.splits`: reading the annotated corpus and splitting it by document;
- :mod:`~thunder.data.labels`: token labels, overlapping windows, the padding collator;
- :mod:`~thunder.data.loaders`: ``(epoch, index)``-keyed datasets, their sampler and a resumable loader;
- :mod:`~thunder.data.token_classification`: :class:`DeIdDataModule`;
- :mod:`~thunder.data.mlm`: :class:`MLMDataModule` and masking.

Configs name the data modules ``thunder.data.DeIdDataModule`` / ``thunder.data.MLMDataModule``.
"""

from thunder.data.labels import IGNORE_INDEX, Example, TokenCollator, token_labels, window_examples
from thunder.data.loaders import EpochDataset, EpochSampler, ResumableDataLoader, loader_generator
from thunder.data.mlm import MLMDataModule, MLMDataset, PackingCollator, mask_tokens, morpheme_groups
from thunder.data.recipe import DEMO_CORPUS, DEMO_TOKENIZER, HEAD_NOUNS, Filler, Recipe, with_random_mentions
from thunder.data.splits import SPLITS, read_corpus, split_documents
from thunder.data.token_classification import TEST_MENTIONS, DeIdDataModule, TokenClassificationDataset
from thunder.synthesis.mentions import DEMO_MENTIONS
from thunder.synthesis.synthesizer import REPLACEMENTS

__all__ = [
    "DEMO_CORPUS",
    "DEMO_MENTIONS",
    "DEMO_TOKENIZER",
    "HEAD_NOUNS",
    "IGNORE_INDEX",
    "REPLACEMENTS",
    "SPLITS",
    "TEST_MENTIONS",
    "DeIdDataModule",
    "EpochDataset",
    "EpochSampler",
    "Example",
    "Filler",
    "MLMDataModule",
    "MLMDataset",
    "PackingCollator",
    "Recipe",
    "ResumableDataLoader",
    "TokenClassificationDataset",
    "TokenCollator",
    "loader_generator",
    "mask_tokens",
    "morpheme_groups",
    "read_corpus",
    "split_documents",
    "token_labels",
    "window_examples",
    "with_random_mentions",
]
