"""The catalogue of structured identifiers: one module each, holding its recognizer and its generator."""

from __future__ import annotations

from thunder.identifiers import (
    bank_account_number,
    business_registration_number,
    card_number,
    driver_license_number,
    email,
    foreign_registration_number,
    ip_address,
    passport_number,
    phone_number,
    resident_registration_number,
    url,
    user_id,
    vehicle_plate,
)
from thunder.identifiers.base import Identifier, PatternRecognizer, Recognizer, ScoredSpan
from thunder.identifiers.context import MentionContext

__all__ = ["CATALOGUE", "Identifier", "MentionContext", "PatternRecognizer", "Recognizer", "ScoredSpan"]

# in this order the recognizers run (a tie between overlapping spans goes to the earlier one)
CATALOGUE: dict[str, Identifier] = {
    module.IDENTIFIER.name: module.IDENTIFIER
    for module in (
        resident_registration_number,
        phone_number,
        bank_account_number,
        card_number,
        vehicle_plate,
        email,
        url,
        ip_address,
        foreign_registration_number,
        business_registration_number,
        passport_number,
        driver_license_number,
        user_id,
    )
}
