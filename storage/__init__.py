"""Fingerprint stores: one async interface, backends chosen by URL. Imports nothing else of ours."""

from neardup.storage.base import (
    Candidates,
    Claim,
    CommitAnswer,
    DecisionRecord,
    FingerprintRecord,
    FingerprintStore,
    IndexKeys,
    Recheck,
    StateValue,
    StoreError,
    TierAware,
    TTLPolicy,
    WindowAnswer,
    WindowQuery,
    doc_ref,
)
from neardup.storage.registry import open_store

__all__ = [
    "Candidates",
    "Claim",
    "CommitAnswer",
    "DecisionRecord",
    "FingerprintRecord",
    "FingerprintStore",
    "IndexKeys",
    "Recheck",
    "StateValue",
    "StoreError",
    "TTLPolicy",
    "TierAware",
    "WindowAnswer",
    "WindowQuery",
    "doc_ref",
    "open_store",
]
