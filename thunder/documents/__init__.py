"""Documents in and out: judgments as courts write them (``formats/``: DOCX, HWPX, PDF), input listing
(``sources``), annotated judgments (``annotation``), reviewed judgments (``reviewed``), pretraining corpora
(``corpus``), published decisions as training documents (``published``) and output files that survive interruption
(``outputs``).

May import ``taxonomy`` and ``language``.
"""
