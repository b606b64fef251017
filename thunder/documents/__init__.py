"""Documents in and out: input listing (``sources``), annotated judgments (``annotation``), reviewed judgments
(``reviewed``), pretraining corpora (``corpus``) and output files that survive interruption (``outputs``).

May import ``taxonomy`` and ``language``.
"""
