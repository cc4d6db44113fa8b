"""``file://PATH``: the in-process store, persisted atomically so a later run de-duplicates
against an earlier one.

Format (version 2): one JSON object ``{"format": "neardup-store", "version": 2, "records": [...],
"claims": [...], "decisions": [...], "states": [...]}`` (index keys as integers) with bytes as base64 and absolute expiry times (null =
forever). Written to a temporary file in the same folder, fsynced, then renamed over the old one.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neardup.storage.base import DecisionRecord, FingerprintRecord, StateValue, TTLPolicy
from neardup.storage.errors import StoreCorruptError, StoreError
from neardup.storage.memory import INF, MemoryFingerprintStore, _Entry

FORMAT = "neardup-store"
VERSION = 2
_NOT_OURS = "give --store a new file, or the one an earlier neardup dedup wrote"


def _b(x: bytes) -> str:
    return base64.b64encode(x).decode("ascii")


def _unb(x: str) -> bytes:
    return base64.b64decode(x.encode("ascii"))


def _exp(x: float) -> float | None:
    return None if x == INF else x


def _unexp(x: float | None) -> float:
    return INF if x is None else float(x)


class FileFingerprintStore(MemoryFingerprintStore):
    """The memory store, loaded from ``path`` on open (if it exists) and written back on flush and close."""
    def __init__(self, path: str | Path, ttl: TTLPolicy | None = None, clock: Callable[[], float] = time.time) -> None:
        """``path``: the JSON file; ``ttl`` and ``clock`` as for the memory store."""
        super().__init__(url=f"file://{path}", ttl=ttl, clock=clock)
        self.path = Path(path)

    async def open(self) -> None:
        """Load the file, if there is one; a file that is not a store of this version is ``StoreCorruptError``."""
        if not self.path.exists():
            return
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise StoreError(f"cannot read store file {self.path}: {exc.strerror}",
                             hint="check the path and its permissions (--store file://PATH)") from exc  # fmt: skip
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise StoreCorruptError(f"store file {self.path} is not JSON: {exc}", hint=_NOT_OURS) from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
            raise StoreCorruptError(f"{self.path}: not a {FORMAT} v{VERSION} file", hint=_NOT_OURS)
        for r in data["records"]:
            rec = FingerprintRecord(
                doc_id=r["id"],
                content_type=r["type"],
                published_at=r["published_at"],
                content_hash=_unb(r["content_hash"]),
                simhash=_unb(r["simhash"]),
                signature=_unb(r["signature"]),
                profile=_unb(r["profile"]),
                shingles=r["shingles"],
                length=r["length"],
                index_keys=tuple(int(k) for k in r["index_keys"]),
            )
            expires_at = _unexp(r["expires_at"])
            self._records[rec.ref] = _Entry(rec, expires_at)
            for key in rec.index_keys:
                self._buckets.setdefault(key, {})[rec.ref] = expires_at
        for c in data["claims"]:
            self._claims[_unb(c["hash"])] = (c["id"], _unexp(c["expires_at"]))
        for d in data["decisions"]:
            rec_d = DecisionRecord(d["id"], d["status"], d["duplicate_of"], d["evidence"], d["type"],
                                   _unb(d.get("content_hash", "")))
            self._decisions[rec_d.doc_id] = (rec_d, _unexp(d["expires_at"]))
        for st in data.get("states", []):
            self._states[st["name"]] = StateValue(int(st["version"]), _unb(st["payload"]))
        await self.expire()

    def _snapshot(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "records": [
                {
                    "id": e.record.doc_id,
                    "type": e.record.content_type,
                    "published_at": e.record.published_at,
                    "content_hash": _b(e.record.content_hash),
                    "simhash": _b(e.record.simhash),
                    "signature": _b(e.record.signature),
                    "profile": _b(e.record.profile),
                    "shingles": e.record.shingles,
                    "length": e.record.length,
                    "index_keys": list(e.record.index_keys),
                    "expires_at": _exp(e.expires_at),
                }
                for e in self._records.values()
            ],
            "claims": [{"hash": _b(h), "id": i, "expires_at": _exp(x)} for h, (i, x) in self._claims.items()],
            "decisions": [
                {
                    "id": d.doc_id,
                    "status": d.status,
                    "duplicate_of": d.duplicate_of,
                    "evidence": d.evidence,
                    "type": d.content_type,
                    "content_hash": _b(d.content_hash),
                    "expires_at": _exp(x),
                }
                for d, x in self._decisions.values()
            ],
            "states": [{"name": n, "version": v.version, "payload": _b(v.payload)} for n, v in self._states.items()],
        }

    async def flush(self) -> None:
        """Write the store to the file atomically (temporary file, fsync, rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self._snapshot(), fh, separators=(",", ":"))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def close(self) -> None:
        """Flush, so the next run sees this one's documents."""
        await self.flush()
