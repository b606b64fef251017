"""Runs over many documents: one output plan for ``thunder deid`` and ``thunder predict`` (``plan``) and the
Lightning corpus runner (``prediction``). May import ``deid`` and below."""
