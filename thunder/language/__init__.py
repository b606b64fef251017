"""The language of judgments: Korean text below any model or document.

Mecab-ko morphemes (``morphemes``), particles and their agreement (``particles``), the upper administrative units
of addresses (``regions``), legal text and the published officials (``legal``), the genre's common words (``genre``)
and the Mecab-ko + BPE tokenizer (``tokenizer``). Imports nothing else of Thunder.
"""
