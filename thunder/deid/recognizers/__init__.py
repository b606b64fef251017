"""Recognizers of names where a judgment's wording says one stands, and the registry that loads every recognizer
(the catalogue of structured identifiers in ``thunder.identifiers`` included)."""
