"""The language of judgments: Korean text below any model or document.

Views of a text with the way back to its characters (``views``: decomposed Hangul read composed), the markup a
replacement never eats (``markup``), particles and their agreement (``particles``), Mecab-ko morphemes
(``morphemes``), the upper administrative units of addresses (``regions``), legal text and the published officials
(``legal``), the courts' de-identification marks (``court_marks``), the genre's common words (``genre``), the
Mecab-ko + BPE tokenizer (``tokenizer``), a pretrained encoder's own tokenizer on the same Mecab-ko pieces
(``pretrained_tokenizer``) and the published release's (``release_tokenizer``). Imports nothing else of Thunder.
"""
