"""Runs over many documents: what outputs are called (``names``), the settings that decide them (``settings``), one
output plan for ``thunder deid`` and ``thunder predict`` (``plan``) and the Lightning corpus runner (``prediction``).
May import ``deid`` and below."""
