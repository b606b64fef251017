"""Runs over many documents: the settings that decide outputs (``settings``), what outputs are called (``names``), one
output plan for ``thunder deid`` and ``thunder predict`` (``plan``) and the Lightning corpus runner (``prediction``).
May import ``deid`` and below."""
