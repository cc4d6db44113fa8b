"""``neardup warmup``: compile every Numba kernel ahead, into the shared cache.

The first run on a machine otherwise spends half a minute to a minute compiling; after this one every
``neardup`` command, worker and library call loads the kernels from the cache
(:mod:`neardup.kernels.cache`) in a second or two. The Docker image and ``make demo`` run it.

The warm-up decides a small built-in window (Chinese, traditional Chinese, English; near
duplicates, changed figures, negations, dates) on an in-memory store, with each MinHash family,
explains a Chinese and an English pair, and calls the image-hash and name-field kernels on tiny
inputs: every kernel is called at least once.
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from neardup.cli import config_option, load_cli_settings

if TYPE_CHECKING:
    from neardup.config import Settings

# near duplicates in each language, a changed figure, a negation, dates: every path of the engine
WARMUP_DOCUMENTS: tuple[dict[str, str], ...] = (
    {"id": "warm-zh-1", "text": "国家统计局今天发布了十月份国民经济运行数据，规模以上工业增加值同比增长百分之四点六，"
                                "社会消费品零售总额同比增长。2024年10月15日 不予批准。"},
    {"id": "warm-zh-2", "text": "国家统计局今天公布了十月份国民经济运行数据，规模以上工业增加值同比增长百分之四点八，"
                                "社会消费品零售总额同比增长。2024年10月15日 给予批准。"},
    {"id": "warm-zh-3", "text": "國家統計局今天發佈了十月份國民經濟運行數據，規模以上工業增加值同比增長4.6%。"},
    {"id": "warm-en-1", "text": "The statistics bureau published the October figures today: industrial output "
                                "grew 4.6 percent year on year and retail sales rose, it was not approved. "
                                "October 15, 2024"},
    {"id": "warm-en-2", "text": "The statistics bureau released the October figures today: industrial output "
                                "grew 4.8 percent year on year and retail sales rose; it was approved. "
                                "2024-10-15 10:30"},
    {"id": "warm-en-3", "text": "Shares of the company fell sharply after the quarterly results missed expectations."},
)  # fmt: skip


@dataclass(frozen=True)
class WarmupReport:
    """What a warm-up did: kernel versions compiled now and loaded from the cache, and where that is."""

    cache: Path
    compiled: int
    loaded: int
    seconds: float

    def line(self) -> str:
        """One line for the terminal."""
        return (f"neardup: kernels ready in {self.seconds:.1f} s ({self.compiled} compiled, "
                f"{self.loaded} loaded from the cache); cache: {self.cache}")  # fmt: skip


def kernel_dispatchers() -> list[Any]:
    """Every jitted function of :mod:`neardup.kernels` (none when ``NUMBA_DISABLE_JIT`` is set)."""
    from numba.core.dispatcher import Dispatcher

    import neardup.kernels

    found: dict[int, Any] = {}
    for info in pkgutil.iter_modules(neardup.kernels.__path__, "neardup.kernels."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == info.name:
                found[id(value)] = value
    return list(found.values())


def _cache_counts(dispatchers: list[Any]) -> tuple[int, int]:
    """(compiled, loaded) kernel versions so far in this process."""
    misses = hits = 0
    for d in dispatchers:
        stats = d.stats
        misses += sum(stats.cache_misses.values())
        hits += sum(stats.cache_hits.values())
    return misses, hits


async def _warm(settings: Settings) -> None:
    from neardup.api import AsyncDeduplicator
    from neardup.config.settings import FingerprintSettings
    from neardup.explain import explain_pair

    families = get_args(FingerprintSettings.model_fields["minhash_family"].annotation)
    for family in families:
        fingerprint = settings.fingerprint.model_copy(update={"minhash_family": family})
        dedup = AsyncDeduplicator(settings=settings.model_copy(update={"fingerprint": fingerprint}))
        async with dedup:
            await dedup.decide_window(WARMUP_DOCUMENTS)
    for a, b in ((WARMUP_DOCUMENTS[0], WARMUP_DOCUMENTS[1]), (WARMUP_DOCUMENTS[3], WARMUP_DOCUMENTS[4])):
        await explain_pair(settings, a, b)
    _warm_off_the_default_path()


def _warm_off_the_default_path() -> None:
    """The kernels a default window does not call: image hashes (documents' images), learned
    name fields (a reviewers' model) and the one-sided name check, on tiny inputs; and the
    language detector's model, which a text the first rule cannot class loads."""
    import numpy as np

    from neardup.kernels import entities, image
    from neardup.text.entities import NAME_PRESENT_FILL, NameSlots, SlotTokens
    from neardup.text.language import LanguageDetector
    from neardup.text.normalize import tables

    image.phash_batch(np.zeros((1, 32, 32), dtype=np.uint8), image.dct_basis())
    image.phash_structure_batch(np.zeros((1, 32, 32), dtype=np.uint8), image.dct_basis())
    image.dhash_batch(np.zeros((1, 8, 9), dtype=np.uint8))
    image.view_phash_batch(np.zeros((1, 64, 64)), np.zeros((1, 8, 64)), np.zeros(1, dtype=np.int64),
                           np.zeros((1, 64, 8)))
    tokens = np.ones(2, dtype=np.uint64)  # two one-character tokens, the first a marker
    entities.marker_names(np.array([0x4E00, 0x4E01], dtype=np.uint32), np.array([0, 1]), np.array([0, 2]), tokens,
                          np.zeros(2, dtype=np.bool_), np.zeros(2, dtype=np.uint64), tokens[:1],
                          np.ones(1, dtype=np.bool_), tables(True)[1])
    # a name of one text standing as other words in another: only asked of a pair with no replaced context
    present = np.array([NAME_PRESENT_FILL], dtype=np.uint64)
    flags = np.zeros(2, dtype=np.bool_)
    two = SlotTokens(np.array([0x4E00, 0x4E01], dtype=np.uint32), np.array([0, 1]), np.array([1, 2]), tokens, flags,
                     flags, 0, tables(True)[1])
    NameSlots(two).other_name_at(present, present)
    LanguageDetector().identifier  # noqa: B018 (its uncompressed model is cached on first use, like the kernels)


def warm_up(settings: Settings) -> WarmupReport:
    """Compile (or load) every kernel by deciding and explaining :data:`WARMUP_DOCUMENTS` in memory."""
    from neardup.kernels.cache import kernel_cache_dir

    started = time.perf_counter()
    # the store of the settings is never touched: the warm-up documents must not be stored
    asyncio.run(_warm(settings.model_copy(update={"store_url": "memory://"})))
    compiled, loaded = _cache_counts(kernel_dispatchers())
    return WarmupReport(kernel_cache_dir(), compiled, loaded, time.perf_counter() - started)


@click.command("warmup", short_help="Compile the kernels ahead (first run: 1-2 minutes).")
@config_option
def warmup_command(config_path: str | None) -> None:
    """Compile every kernel ahead, so that later runs start in a second or two.

    The compiled kernels go to the shared cache (NUMBA_CACHE_DIR, else the numba folder of
    NEARDUP_CACHE_DIR, $XDG_CACHE_HOME/neardup or ~/.cache/neardup); the command prints where.
    Nothing is written to the configured store.
    """
    settings = load_cli_settings(config_path, store_url="memory://")
    click.echo(warm_up(settings).line())
