"""Fuzz one real worker with ~1,800 malformed messages interleaved with 200 good documents.

Fixed seed, bounded count. Malformed input of every kind seen from crawlers (random bytes,
truncated JSON of real documents, wrong field types, missing fields, texts over the size limit,
invalid UTF-8, unpaired surrogates in JSON escapes, JSON nested 100,000 levels deep, empty
messages and tombstones, huge ids and keys) must each end up on the dead-letter topic exactly
once, with a reason, the original bytes and the position that identifies it; every good document
is decided exactly once; the worker stays alive and never gets stuck on a window.
"""

from __future__ import annotations

import base64
import json
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess, load_docs
from tests.fixtures.kafka_broker import run_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

SEED = 20261202
N_GOOD = 200
N_MALFORMED = 1800
MAX_BYTES = 20_000  # NEARDUP_NORMALIZE__MAX_BYTES of the worker
MESSAGE_LIMIT = MAX_BYTES * 2 + 4096  # parse_document rejects larger messages before decoding
MAX_ID = 512  # default normalize.max_id_length

# category -> the dead-letter reasons that are a correct answer for it
EXPECTED_REASONS: dict[str, set[str]] = {
    "random_bytes": {"bad_json", "bad_encoding", "bad_schema"},
    "truncated_json": {"bad_json", "bad_encoding"},
    "id_wrong_type": {"missing_id"},
    "text_wrong_type": {"missing_text"},
    "missing_field": {"missing_id", "missing_text"},
    "text_too_large": {"too_large"},
    "message_too_large": {"too_large"},
    "invalid_utf8": {"bad_encoding"},
    "surrogate": {"bad_encoding"},
    "deep_nesting": {"bad_json", "too_large"},
    "empty": {"bad_json", "empty_message", "bad_schema", "missing_id", "empty_text"},
    "huge_id": {"bad_field", "too_large", "bad_json"},
    # a 400-digit published_at overflows float(): service/document.py lets the OverflowError out,
    # the agent dead-letters it as decode_error (still correct: rejected, with a reason)
    # NaN / Infinity are not JSON at all (strict JSON in and out): bad_json, not bad_field
    "bad_published_at": {"bad_field", "bad_json", "decode_error"},
    "bad_schema": {"bad_schema"},
    "bad_field_type": {"bad_field"},
    "bom": {"bad_json"},
}


@dataclass
class Msg:
    index: int
    kind: str  # "good", or a malformed category of EXPECTED_REASONS
    key: bytes | None
    value: bytes | None
    doc_id: str | None = None  # good documents only
    partition: int = -1
    offset: int = -1


def _esc(text: str) -> bytes:
    """A JSON string body (no quotes), UTF-8."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")


class Fuzzer:
    def __init__(self, rng: random.Random, docs: list[dict[str, Any]]) -> None:
        self.rng = rng
        self.docs = docs

    def text(self, lo: int = 200, hi: int = 3000) -> str:
        t = self.rng.choice(self.docs)["text"]
        n = self.rng.randint(lo, hi)
        return t[:n] if len(t) >= n else t

    def doc_bytes(self) -> bytes:
        d = dict(self.rng.choice(self.docs))
        d["id"] = f"fuzz-{self.rng.getrandbits(40):x}"
        return json.dumps(d, ensure_ascii=self.rng.random() < 0.3).encode("utf-8")

    def obj(self, **fields: Any) -> bytes:
        return json.dumps(fields, ensure_ascii=False).encode("utf-8")

    # -- categories: each returns a value that parse_document must reject ---------------------
    def random_bytes(self) -> bytes:
        return self.rng.randbytes(self.rng.randint(8, 4000))

    def truncated_json(self) -> bytes:
        full = self.doc_bytes()
        return full[: self.rng.randint(1, len(full) - 1)]

    def id_wrong_type(self) -> bytes:
        bad = self.rng.choice([[1, 2], ["dev"], True, False, 1.5, -0.0, 1e30, {"id": "x"}, None, "", "   ", "\t\n"])
        return self.obj(id=bad, text=self.text())

    def text_wrong_type(self) -> bytes:
        bad = self.rng.choice([42, 3.14, -1, {"text": "nested"}, ["a", "b"], True, None])
        return self.obj(id=f"tw-{self.rng.getrandbits(32)}", text=bad)

    def missing_field(self) -> bytes:
        which = self.rng.choice(["id", "text", "both"])
        if which == "id":
            return self.obj(text=self.text(), title="no id")
        if which == "text":
            return self.obj(id=f"mf-{self.rng.getrandbits(32)}", title="no text")
        return self.obj(title="neither", lang="zh")

    def text_too_large(self) -> bytes:
        # over max_bytes, but under the message limit: the text-size check rejects it
        size = self.rng.randint(MAX_BYTES + 1, MAX_BYTES + 15_000)
        base = self.rng.choice(self.docs)["text"]
        reps = size // max(1, len(base.encode("utf-8"))) + 1
        text = (base * reps).encode("utf-8")[:size].decode("utf-8", "ignore")
        while len(text.encode("utf-8")) <= MAX_BYTES:
            text += "x"
        return self.obj(id=f"big-{self.rng.getrandbits(32)}", text=text)

    def message_too_large(self) -> bytes:
        # over the message limit: rejected on its size alone, before decoding
        size = self.rng.choice([MESSAGE_LIMIT + 1, 60_000, 120_000])
        body = self.rng.choice(self.docs)["text"].encode("utf-8")
        text = (body * (size // max(1, len(body)) + 1))[:size].decode("utf-8", "ignore")
        raw = self.obj(id=f"huge-{self.rng.getrandbits(32)}", text=text)
        return raw if len(raw) > MESSAGE_LIMIT else raw + b" " * (MESSAGE_LIMIT + 1 - len(raw))

    def invalid_utf8(self) -> bytes:
        bad = self.rng.choice(
            [b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xe4\xb8", b"\xf8\x88\x80\x80\x80"]
        )
        t = self.text()
        cut = self.rng.randint(0, len(t))
        return b'{"id": "u8-%d", "text": "' % self.rng.getrandbits(32) + _esc(t[:cut]) + bad + _esc(t[cut:]) + b'"}'

    def surrogate(self) -> bytes:
        # JSON escapes of an unpaired UTF-16 surrogate: valid JSON, but no valid Unicode text
        lone = self.rng.choice(["\ud800", "\udfff", "\ud83d", "\udc00"])
        where = self.rng.choice(["id", "text", "title", "source"])
        fields = {"id": f"sg-{self.rng.getrandbits(32)}", "text": self.text(), "title": "t", "source": "s"}
        cut = self.rng.randint(0, len(fields[where]))
        fields[where] = fields[where][:cut] + lone + fields[where][cut:]
        return json.dumps(fields, ensure_ascii=True).encode("ascii")

    def deep_nesting(self) -> bytes:
        # 100,000 levels are over the message limit (200-600 KB): a few of them; the rest are
        # small enough to reach json.loads and its recursion limit
        kinds = ["list100k", "dict100k", "list20k", "in_doc", "dict6k"]
        kind = self.rng.choices(kinds, weights=[1, 1, 4, 4, 4])[0]
        if kind == "list100k":
            return b"[" * 100_000 + b"]" * 100_000
        if kind == "dict100k":
            return b'{"a":' * 100_000 + b"1" + b"}" * 100_000
        if kind == "list20k":
            return b"[" * 20_000 + b"]" * 20_000
        if kind == "dict6k":
            return b'{"a":' * 6_000 + b"1" + b"}" * 6_000
        return b'{"id": "deep-%d", "text": "%s", "meta": ' % (self.rng.getrandbits(32), _esc(self.text(50, 500))) + (
            b"[" * 15_000 + b"]" * 15_000 + b"}"
        )

    def empty(self) -> bytes | None:
        return self.rng.choice([None, b"", b" ", b"\n", b"\r\n\t ", b"null", b"{}", b"[]", b'""',
                                b'{"id": "e-1", "text": ""}', b'{"id": "e-2", "text": "   \\n\\t  "}'])  # fmt: skip

    def huge_id(self) -> bytes:
        kind = self.rng.choice(["long", "longer", "over_message", "bigint", "bigint_digits"])
        if kind == "long":
            return self.obj(id="i" * self.rng.randint(MAX_ID + 1, 4 * MAX_ID), text=self.text())
        if kind == "longer":
            return self.obj(id="长" * self.rng.randint(MAX_ID + 1, 10_000), text=self.text())
        if kind == "over_message":
            return self.obj(id="x" * 100_000, text=self.text())
        if kind == "bigint":  # a 600-digit integer id: longer than max_id_length once made a string
            return b'{"id": ' + b"7" * 600 + b', "text": "' + _esc(self.text()) + b'"}'
        # over Python's 4,300-digit limit for int(): the JSON decoder itself refuses it
        return b'{"id": ' + b"9" * 5_000 + b', "text": "' + _esc(self.text()) + b'"}'

    def bad_published_at(self) -> bytes:
        bad = self.rng.choice([b"NaN", b"Infinity", b"-Infinity", b'"yesterday"', b"true", b"[1]", b"{}",
                               b'"2024-13-45"', b"9" * 400])  # fmt: skip
        return b'{"id": "pa-%d", "text": "%s", "published_at": %s}' % (
            self.rng.getrandbits(32), _esc(self.text()), bad)  # fmt: skip

    def bad_schema(self) -> bytes:
        return self.rng.choice([b"[1, 2, 3]", b"42", b'"just a string"', b"true", b"3.5e10",
                                b'[{"id": "in-a-list", "text": "x"}]'])  # fmt: skip

    def bad_field_type(self) -> bytes:
        name = self.rng.choice(["title", "url", "source", "type", "lang"])
        bad = self.rng.choice([5, [], {"x": 1}, True, 2.5])
        return self.obj(**{"id": f"bf-{self.rng.getrandbits(32)}", "text": self.text(), name: bad})

    def bom(self) -> bytes:
        return b"\xef\xbb\xbf" + self.doc_bytes()

    # -- good documents: real ones, some in valid but unusual shapes ---------------------------
    def good(self, doc: dict[str, Any]) -> tuple[bytes, str]:
        d = dict(doc)
        shape = self.rng.random()
        if shape < 0.1:  # integer ids are accepted (as their decimal string)
            n = 10**12 + self.rng.getrandbits(30)
            d["id"] = n
            return json.dumps(d, ensure_ascii=False).encode("utf-8"), str(n)
        if shape < 0.2:  # every non-ASCII character escaped, astral ones as surrogate pairs
            d["title"] = "emoji \U0001f600 and 𠀀"
            return json.dumps(d, ensure_ascii=True).encode("utf-8"), str(d["id"])
        if shape < 0.3:  # extra fields, an ISO time, an unknown language code
            d.update(published_at="2024-05-01T08:00:00Z", lang="xx", crawler={"depth": 3, "tags": ["a"]})
        elif shape < 0.35:  # published_at in milliseconds
            d["published_at"] = 1_714_550_400_000
        return json.dumps(d, ensure_ascii=False).encode("utf-8"), str(d["id"])


def build_messages(docs: list[dict[str, Any]]) -> list[Msg]:
    rng = random.Random(SEED)
    fz = Fuzzer(rng, docs)
    categories = list(EXPECTED_REASONS)
    good_at = set(rng.sample(range(N_GOOD + N_MALFORMED), N_GOOD))
    good_docs = iter(docs[:N_GOOD])
    msgs: list[Msg] = []
    for i in range(N_GOOD + N_MALFORMED):
        if i in good_at:
            value, did = fz.good(next(good_docs))
            msgs.append(Msg(i, "good", did.encode("utf-8"), value, doc_id=did))
            continue
        kind = categories[len(msgs) % len(categories)] if i < len(categories) * 2 else rng.choice(categories)
        value = getattr(fz, kind)()
        r = rng.random()  # keys: mostly readable, some absent, some not UTF-8, some long
        if r < 0.1 and value is not None:  # a tombstone needs a key
            key = None
        elif r < 0.15:
            key = b"\xff\xfe-%d" % i
        elif r < 0.18:
            key = b"k" * rng.randint(2_000, 20_000)
        else:
            key = b"bad-%d" % i
        msgs.append(Msg(i, kind, key, value))
    return msgs


def publish(pipeline: Pipeline, msgs: list[Msg]) -> None:
    """All messages, in order, through one producer; records each one's partition and offset."""

    async def go() -> None:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(
            bootstrap_servers=pipeline.broker.bootstrap, acks="all", linger_ms=5, max_request_size=1_048_576
        )
        await producer.start()
        try:
            futures = [await producer.send(pipeline.raw, m.value, key=m.key) for m in msgs]
            for m, fut in zip(msgs, futures, strict=True):
                meta = await fut
                m.partition, m.offset = meta.partition, meta.offset
        finally:
            await producer.stop()

    run_sync(go)


def raw_bytes(d: dict[str, Any]) -> bytes | None:
    if d["raw_encoding"] == "none":
        return None
    if d["raw_encoding"] == "base64":
        return base64.b64decode(d["raw"])
    return str(d["raw"]).encode("utf-8")


def metric(text: str, name: str) -> float:
    return sum(float(m.group(1)) for m in re.finditer(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.M))


def test_fuzz_malformed_messages_all_dead_lettered(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], datasets_dir: Path
) -> None:
    broker = pipeline.broker
    docs = [json.loads(line) for line in load_docs(datasets_dir, N_GOOD + 300, offset=1000)]
    msgs = build_messages(docs)
    malformed = [m for m in msgs if m.kind != "good"]
    good = [m for m in msgs if m.kind == "good"]
    assert len(malformed) == N_MALFORMED and len(good) == N_GOOD
    assert len({m.doc_id for m in good}) == N_GOOD

    worker = start_worker("fuzz", NEARDUP_NORMALIZE__MAX_BYTES=str(MAX_BYTES))
    worker.wait_ready()
    t0 = time.monotonic()
    publish(pipeline, msgs)
    published_s = time.monotonic() - t0

    records = broker.consume_sync(pipeline.outputs, expected=len(msgs), timeout=150, settle=3)
    elapsed = time.monotonic() - t0
    log = worker.log_tail(200_000)
    assert worker.proc.poll() is None, f"worker died:\n{log[-6000:]}"
    status, health = worker.json("GET", "/health")
    assert status == 200 and health["status"] == "ok"

    by_pos = {(m.partition, m.offset): m for m in msgs}
    dead = [json.loads(r.value) for r in records if r.topic == pipeline.dead_letter]
    decisions = [(r, json.loads(r.value)) for r in records if r.topic != pipeline.dead_letter]
    kinds = Counter(m.kind for m in malformed)
    print(f"\nfuzz: published {len(msgs)} in {published_s:.1f}s, {len(records)} outputs after {elapsed:.1f}s; "
          f"{len(dead)} dead letters; categories {dict(kinds)}")  # fmt: skip

    # every output arrived: a window stuck on a poison message would hold back its partition
    assert len(records) >= len(msgs), f"only {len(records)} of {len(msgs)} outputs; worker log:\n{log[-6000:]}"
    assert "failed; retrying" not in log, f"a window failed as a whole:\n{log[-6000:]}"

    # dead letters: exactly the malformed messages, each once, identified by partition and offset
    seen: Counter[tuple[int, int]] = Counter()
    wrong: list[str] = []
    reasons: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for d in dead:
        assert d["topic"] == pipeline.raw
        pos = (d["partition"], d["offset"])
        assert pos in by_pos, f"dead letter for an unknown position {pos}"
        m = by_pos[pos]
        seen[pos] += 1
        reasons[m.kind][d["reason"]] += 1
        if m.kind == "good":
            wrong.append(f"good document {m.doc_id} dead-lettered: {d['reason']}: {d['error']}")
            continue
        if not d["reason"] or not d["error"]:
            wrong.append(f"#{m.index} {m.kind}: empty reason or error {d['reason']!r} {d['error']!r}")
        if d["reason"] not in EXPECTED_REASONS[m.kind]:
            wrong.append(f"#{m.index} {m.kind}: reason {d['reason']} ({d['error'][:120]}) value {m.value[:80]!r}")
        original = raw_bytes(d)
        assert d["raw_bytes"] == len(m.value or b""), (m.index, m.kind)
        if m.value is None:
            assert original is None
        elif d["raw_truncated"]:
            assert original is not None and m.value.startswith(original) and len(original) < len(m.value)
        else:
            assert original == m.value, (m.index, m.kind)
        if m.key is not None and len(m.key) <= 1024:
            try:
                assert d["key"] == m.key.decode("utf-8")
            except UnicodeDecodeError:
                assert d["key"] == base64.b64encode(m.key).decode("ascii")
    print("reasons by category:", {k: dict(v) for k, v in sorted(reasons.items())})
    assert not wrong, "\n".join(wrong[:40])
    repeated = {p: n for p, n in seen.items() if n > 1}
    assert not repeated, f"dead-lettered more than once: {repeated}"
    missing = [m for m in malformed if (m.partition, m.offset) not in seen]
    assert not missing, [(m.index, m.kind, (m.value or b"")[:60]) for m in missing[:20]]
    assert len(dead) == len(malformed)

    # good documents: each decided exactly once, keyed by its id
    ids = Counter(str(rec["id"]) for _, rec in decisions)
    good_ids = {m.doc_id for m in good}
    assert set(ids) == good_ids, set(ids) ^ good_ids
    assert all(n == 1 for n in ids.values()), {k: n for k, n in ids.items() if n > 1}
    for r, rec in decisions:
        assert r.key.decode("utf-8") == str(rec["id"])
        assert rec["status"] in ("unique", "duplicate")
        assert (rec["status"] == "duplicate") == (r.topic == pipeline.duplicate)
        assert rec["duplicate_of"] is None or rec["duplicate_of"] in good_ids

    # the worker's own counts agree: every message taken once, every malformed one dead-lettered
    status, body = worker.http("GET", "/metrics")
    text = body.decode()
    assert status == 200
    assert metric(text, "neardup_agent_messages_in_total") == len(msgs)
    assert metric(text, "neardup_dead_letter_total") == len(malformed)
    assert worker.proc.poll() is None
    assert worker.stop() == 0
