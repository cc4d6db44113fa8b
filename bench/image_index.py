"""The image index on bench/images.py's labelled set: of the variant pairs within the radius, how
many the index proposes (a pHash filed under its four 16-bit blocks, ``neardup.sketch.index.image_keys``),
and how many pairs of different photographs it proposes.

    .venv/bin/python bench/image_index.py [--radius 14]

Every photograph of the set but the stereo pair (one scene, reported apart there), both halves:
each variant against its own original, and every image against the other photographs' originals.
Besides the index as built (exact blocks), two kinds of alternatives are measured: probing every
block value 1 or 2 bits away from the query's own (the stored side unchanged), which finds more
changed copies at the price of a bucket 17 or 137 times as wide per block; and 2, 4 or 8 tables of
four 16-bit blocks each, every table but the first over the hash's bits in a fixed random order
(4 keys a table, filed and asked). Last, crop views (bench/images.py's scheme: each image also
hashed with 5 % and 10 % cut off a side and 5 % off all four, both sides filed and asked under the
blocks of all ten hashes, the distance the least from either one's views to the other's whole
image): 40 keys an image.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import images as labelled  # bench/images.py: the set and its hashes

from neardup.sketch.index import IMAGE_BLOCK_BITS, IMAGE_BLOCKS, image_keys


@cache
def filed(phash: int) -> frozenset[int]:
    """The keys an image is filed under."""
    return frozenset(image_keys(np.array([phash], dtype=np.uint64))[0].tolist())


def probed(phash: int, flips: int) -> frozenset[int]:
    """The keys a query asks for: its blocks, and each block value up to ``flips`` bits away."""
    variants = []
    for block in range(IMAGE_BLOCKS):
        shift = (IMAGE_BLOCKS - 1 - block) * IMAGE_BLOCK_BITS
        for r in range(1, flips + 1):
            for bits in combinations(range(IMAGE_BLOCK_BITS), r):
                variants.append((block, phash ^ sum(1 << (shift + b) for b in bits)))
    keys = set(filed(phash))
    if variants:
        table = image_keys(np.array([v for _, v in variants], dtype=np.uint64))
        keys.update(int(table[i, block]) for i, (block, _) in enumerate(variants))
    return frozenset(keys)


@dataclass(frozen=True, slots=True)
class Pairs:
    """The set's pairs: each variant and its original, each image and another photograph's original."""

    originals: dict[str, Any]
    variants: list[Any]
    negatives: list[tuple[Any, Any]]

    @classmethod
    def of(cls, items: list[Any]) -> Pairs:
        """Every photograph of the set but the stereo pair."""
        items = [i for i in items if not i.photo.startswith("motorcycle")]
        originals = {i.photo: i for i in items if i.kind == "original"}
        negatives = [(i, o) for i in items for name, o in originals.items()
                     if name != i.photo and (i.kind != "original" or name > i.photo)]
        return cls(originals, [i for i in items if i.kind != "original"], negatives)

    def bits(self, item: Any) -> int:
        """A variant's pHash distance to its original."""
        return int((item.phash ^ self.originals[item.photo].phash).bit_count())


PERMUTATIONS = np.random.default_rng(23).permuted(np.tile(np.arange(64), (7, 1)), axis=1)


def table_keys(phash: int, tables: int) -> frozenset[tuple[int, int, int]]:
    """(table, block, value) of the hash's 16-bit blocks in each of ``tables`` bit orders."""
    bits = [(phash >> (63 - i)) & 1 for i in range(64)]
    keys = set()
    for t in range(tables):
        order = range(64) if t == 0 else PERMUTATIONS[t - 1].tolist()
        value = 0
        for i in order:
            value = (value << 1) | bits[i]
        keys.update((t, b, (value >> (48 - 16 * b)) & 0xFFFF) for b in range(IMAGE_BLOCKS))
    return frozenset(keys)


def table_proposals(pairs: Pairs, radius: int, tables: int) -> tuple[Counter[str], int]:
    """As :func:`proposals`, for ``tables`` tables of blocks."""
    keys = {h: table_keys(h, tables) for h in {i.phash for i in pairs.variants} | {i.phash for i, _ in pairs.negatives}
            | {o.phash for o in pairs.originals.values()}}
    found = Counter(i.kind for i in pairs.variants
                    if pairs.bits(i) <= radius and keys[i.phash] & keys[pairs.originals[i.photo].phash])
    return found, sum(1 for i, o in pairs.negatives if keys[i.phash] & keys[o.phash])


def view_proposals(pairs: Pairs, radius: int) -> tuple[Counter[str], int, Counter[str]]:
    """With crop views: the variants within ``radius`` (by the views' distance) and proposed by
    the blocks of any of the ten hashes; the pairs of different photographs proposed; and, per
    kind, the variants within ``radius`` by the views' distance at all."""
    def keys(item: Any) -> frozenset[int]:
        return frozenset().union(filed(item.phash), *(filed(v) for v in item.views))

    def bits(a: Any, b: Any) -> int:
        return int(labelled.bits(a, b, "phash_views"))

    within = Counter(i.kind for i in pairs.variants if bits(i, pairs.originals[i.photo]) <= radius)
    found = Counter(i.kind for i in pairs.variants if bits(i, pairs.originals[i.photo]) <= radius
                    and keys(i) & keys(pairs.originals[i.photo]))
    return found, sum(1 for i, o in pairs.negatives if keys(i) & keys(o)), within


def proposals(pairs: Pairs, radius: int, flips: int) -> tuple[Counter[str], int]:
    """Per kind, the variants within ``radius`` the index proposes with ``flips``-bit probes; and
    how many pairs of different photographs it proposes."""
    asked = {i.phash for i in pairs.variants} | {i.phash for i, _ in pairs.negatives}
    queries = {h: probed(h, flips) for h in asked}
    found = Counter(i.kind for i in pairs.variants
                    if pairs.bits(i) <= radius and queries[i.phash] & filed(pairs.originals[i.photo].phash))
    return found, sum(1 for i, o in pairs.negatives if queries[i.phash] & filed(o.phash))


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--radius", type=int, default=14)
    args = parser.parse_args()
    pairs = Pairs.of(labelled.hash_set(labelled.labelled_files(labelled.photographs())))
    kinds = Counter(i.kind for i in pairs.variants)
    within = Counter(i.kind for i in pairs.variants if pairs.bits(i) <= args.radius)
    print(f"{len(pairs.variants)} variant pairs, {len(pairs.negatives)} pairs of different photographs, "
          f"radius {args.radius}")
    print("kind: pairs / within the radius / within the radius and proposed by the index (exact, 1-bit, 2-bit probes;"
          " 2, 4, 8 tables; crop views)")
    runs = [proposals(pairs, args.radius, flips) for flips in (0, 1, 2)]
    runs += [table_proposals(pairs, args.radius, tables) for tables in (2, 4, 8)]
    viewed, proposed, within_views = view_proposals(pairs, args.radius)
    runs.append((viewed, proposed))
    print(f"  (with crop views, {sum(within_views.values())} of the pairs are within the radius)")
    for kind in kinds:
        print(f"  {kind:14s} {kinds[kind]:4d} {within[kind]:4d}   " + " ".join(f"{f[kind]:4d}" for f, _ in runs))
    total = len(pairs.variants)
    print(f"  {'recall':14s}      {sum(within.values()) / total:.3f}  "
          + " ".join(f"{sum(f.values()) / total:.3f}" for f, _ in runs))
    close = sum(1 for i, o in pairs.negatives if (i.phash ^ o.phash).bit_count() <= args.radius)
    print("  different photographs proposed: " + ", ".join(str(n) for _, n in runs)
          + f" of {len(pairs.negatives)}; within the radius: {close}")


if __name__ == "__main__":
    main()
