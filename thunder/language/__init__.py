"""The language of judgments: Korean text below any model or document.

Particles and their agreement (``particles``), Mecab-ko morphemes (``morphemes``), the upper administrative units of
addresses (``regions``), legal text and the published officials (``legal``), the courts' de-identification marks
(``court_marks``), the genre's common words (``genre``), the Mecab-ko + BPE tokenizer (``tokenizer``) and the
published release's (``release_tokenizer``). Imports nothing else of Thunder.
"""
