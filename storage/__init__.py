"""Fingerprint stores: one async interface, backends chosen by URL. Imports nothing else of ours."""

from neardup.storage.base import DecisionRecord, FingerprintRecord, FingerprintStore, StoreError, TTLPolicy
from neardup.storage.registry import open_store

__all__ = [
    "DecisionRecord",
    "FingerprintRecord",
    "FingerprintStore",
    "StoreError",
    "TTLPolicy",
    "open_store",
]
