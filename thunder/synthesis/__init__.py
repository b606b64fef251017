"""Training documents made from annotated judgments: mentions sampled into placeholders (``synthesizer``,
``mentions``, ``names``, ``fills``), facts paragraphs composed into whole judgments from section templates
(``templates``, ``composition``), general nouns substituted (``vocabulary``).

May import ``taxonomy``, ``plugins``, ``language``, ``identifiers`` and ``documents``.
"""
