"""Measurement: gold documents (``gold``), scoring a de-identifier against them (``evaluate``) and the report
(``report``). May import ``deid``, ``data`` and below."""
