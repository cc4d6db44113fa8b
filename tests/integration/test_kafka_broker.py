"""The session broker fixture itself: topics with partitions, produce and consume through aiokafka."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from tests.fixtures.kafka_broker import KafkaBroker

pytestmark = pytest.mark.integration


async def test_broker_answers_metadata(kafka_broker: KafkaBroker) -> None:
    assert kafka_broker.kind in ("kafka", "tansu")
    assert kafka_broker.url == f"kafka://{kafka_broker.bootstrap}"
    assert kafka_broker.proc.poll() is None
    admin = await kafka_broker.admin()
    try:
        info = await admin.describe_cluster()
    finally:
        await admin.close()
    assert info["brokers"], info


async def test_create_topic_with_four_partitions(kafka_broker: KafkaBroker) -> None:
    name = kafka_broker.topic_name("four")
    await kafka_broker.create_topic(name, partitions=4)
    counts = await kafka_broker.partition_counts([name])
    assert counts == {name: 4}
    # creating again is harmless
    await kafka_broker.create_topic(name, partitions=4)


async def test_produce_and_consume_roundtrip(kafka_broker: KafkaBroker) -> None:
    name = await kafka_broker.create_topic(kafka_broker.topic_name("roundtrip"), partitions=4)
    sent = {f"doc-{i}": {"id": f"doc-{i}", "text": f"body {i}"} for i in range(20)}

    producer = AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap, acks="all")
    await producer.start()
    try:
        futures = [await producer.send(name, json.dumps(v).encode(), key=k.encode()) for k, v in sent.items()]
        metas = await asyncio.gather(*futures)
    finally:
        await producer.stop()
    assert {m.partition for m in metas} <= {0, 1, 2, 3}

    consumer = AIOKafkaConsumer(
        name,
        bootstrap_servers=kafka_broker.bootstrap,
        group_id=kafka_broker.topic_name("group"),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    got: dict[str, dict[str, str]] = {}
    try:
        async with asyncio.timeout(60):
            while len(got) < len(sent):
                batch = await consumer.getmany(timeout_ms=500)
                for tp, msgs in batch.items():
                    for m in msgs:
                        assert m.key is not None and m.value is not None
                        got[m.key.decode()] = json.loads(m.value)
                        assert tp.partition == m.partition
        await consumer.commit()
        committed = {p: await consumer.committed(TopicPartition(name, p)) for p in range(4)}
    finally:
        await consumer.stop()
    assert got == sent
    assert sum(c or 0 for c in committed.values()) == len(sent)


async def test_helpers_produce_and_consume(kafka_broker: KafkaBroker) -> None:
    name = await kafka_broker.create_topic(kafka_broker.topic_name("helpers"), partitions=2)
    n = await kafka_broker.produce(name, [(f"k{i}", f"v{i}") for i in range(10)])
    records = await kafka_broker.consume(name, expected=n, timeout=30)
    assert sorted(r.value.decode() for r in records) == sorted(f"v{i}" for i in range(10))


def test_sync_helpers(kafka_broker: KafkaBroker) -> None:
    name = kafka_broker.create_topic_sync(kafka_broker.topic_name("sync"), partitions=3)
    kafka_broker.produce_sync(name, [(None, b"x"), (b"k", b"y")])
    assert len(kafka_broker.consume_sync(name, expected=2)) == 2
