"""The image index on bench/images.py's labelled set: of the variant pairs, how many the index
proposes and finds within the radius, and how many pairs of different photographs it proposes,
for the index as built (``neardup.media.hashes.ImageHashes.filed`` and ``asked``, the keys of
``neardup.sketch.index.image_keys``, the distance of ``ImageHashes.match_bits``) and for the
alternatives it was chosen from.

    .venv/bin/python bench/image_index.py [--radius 14] [--view-radius 12] [--json RESULTS.json]

Every photograph of the set but the stereo pair (one scene, reported apart there), both halves.
Each pair is measured both ways, since either copy may be the earlier one: the original stored
and its variant asked, and the variant stored and the original asked. Pairs of different
photographs: every image against the other photographs' originals, both ways too.

A scheme is what an image is filed under (its whole pHash's four 16-bit blocks, and perhaps some
of its views'), what a new image is asked under (its whole pHash's blocks, perhaps its views',
perhaps every block value 1 or 2 bits away), and the distance that decides (whole pHash to whole
pHash within the radius, or one of the asked image's views to the stored whole pHash within the
views' radius, ``ImageHashes.match_bits``; for the crop views of bench/images.py on both sides,
the least either way, within the radius). Cost columns: keys asked and filed per image, and candidates (asked x
filed / 16: how many more stored images a lookup reads than with one pHash asked and filed, for
hashes spread like random ones).

Then the views' radius: the index as built at views' radii 6 to 14. Each view is one more chance
for a different photograph to come near, and the labelled set's 26 photographs are too few to
show it: 2,000 pictures of random fields (random gray levels on a coarse grid of 4 to 11 cells,
enlarged bicubically, noise added, JPEG quality 90; a fixed seed) give the pairs, every picture
asked against every other stored, within the radius by the whole pHash and by a view.

Last, crops that are not in the labelled set (other sides and amounts up to 10 %), stored
original and asked crop and the other way round: how far the views' choice holds beyond the
crops it was measured on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import images as labelled  # bench/images.py: the set and its hashes
from PIL import Image

from neardup.bench.report import default_json_path, environment
from neardup.media.hashes import CORNER_VIEWS, FILED_VIEW, VIEWS, ImageHashes, ImageRadii
from neardup.media.images import hash_files
from neardup.sketch.index import IMAGE_BLOCK_BITS, IMAGE_BLOCKS, image_keys

CROPS = len(VIEWS)  # ImageHashes.views: the crop views, then as many pad views
# crops the labelled set does not hold: (left, top, right, bottom) fractions cut off
OTHER_CROPS = {"3% left": (0.03, 0, 0, 0), "7% top": (0, 0.07, 0, 0), "8% right": (0, 0, 0.08, 0),
               "10% bottom": (0, 0, 0, 0.1), "10% left+top": (0.1, 0.1, 0, 0), "6% left+right": (0.06, 0, 0.06, 0),
               "2.5% each side": (0.025, 0.025, 0.025, 0.025), "8% right+bottom": (0, 0, 0.08, 0.08),
               "10% right+top": (0, 0.1, 0.1, 0), "7% left+bottom": (0.07, 0, 0, 0.07)}


@cache
def filed_keys(phash: int) -> frozenset[int]:
    """The four keys of a pHash's blocks."""
    return frozenset(image_keys(np.array([phash], dtype=np.uint64))[0].tolist())


@cache
def probed(phash: int, flips: int) -> frozenset[int]:
    """The keys of a pHash's blocks and of every block value up to ``flips`` bits away."""
    variants = []
    for block in range(IMAGE_BLOCKS):
        shift = (IMAGE_BLOCKS - 1 - block) * IMAGE_BLOCK_BITS
        for r in range(1, flips + 1):
            for bits in combinations(range(IMAGE_BLOCK_BITS), r):
                variants.append((block, phash ^ sum(1 << (shift + b) for b in bits)))
    keys = set(filed_keys(phash))
    if variants:
        table = image_keys(np.array([v for _, v in variants], dtype=np.uint64))
        keys.update(int(table[i, block]) for i, (block, _) in enumerate(variants))
    return frozenset(keys)


def probe_keys(flips: int) -> int:
    """Keys asked for one pHash with ``flips``-bit probes."""
    return IMAGE_BLOCKS * sum(len(list(combinations(range(IMAGE_BLOCK_BITS), r))) for r in range(flips + 1))


@dataclass(frozen=True, slots=True)
class Scheme:
    """What an image is asked under (pHash, probe bits), filed under, and the distance that decides."""

    name: str
    asked: Callable[[Any], list[tuple[int, int]]]
    filed: Callable[[Any], list[int]]
    within: Callable[[Any, Any], bool]  # (asked item, stored item): the distance decides a match

    def keys_asked(self, item: Any) -> frozenset[int]:
        """The keys ``item`` is looked up under."""
        return frozenset().union(*(probed(h, f) for h, f in self.asked(item)))

    def keys_filed(self, item: Any) -> frozenset[int]:
        """The keys ``item`` is filed under."""
        return frozenset().union(*(filed_keys(h) for h in self.filed(item)))

    def found(self, asked: Any, stored: Any) -> tuple[bool, bool]:
        """Whether the index proposes ``stored`` to ``asked``, and whether the distance makes them a match."""
        return bool(self.keys_asked(asked) & self.keys_filed(stored)), self.within(asked, stored)

    def cost(self, item: Any) -> tuple[int, int]:
        """Keys asked and keys filed per image (one with views)."""
        return sum(probe_keys(f) for _, f in self.asked(item)), IMAGE_BLOCKS * len(self.filed(item))


def _whole(item: Any) -> list[int]:
    return [item.phash]


def schemes(radius: int, view_radius: int, low_structure: int = 0) -> list[Scheme]:
    """The index as built before the views, the alternatives, and the index as built (last but one).
    The schemes with views are held to the smaller radii for a pair with a picture of less than
    ``low_structure`` percent structure (``ImageRadii``; 0: never)."""
    radii = ImageRadii(radius, view_radius, low_structure)

    def _views_bits(a: Any, b: Any) -> bool:
        radius, view_radius = radii.of(a.hashes.structure, b.hashes.structure)
        return a.hashes.match_bits(b.phash, radius, view_radius, radii.corners(view_radius)) is not None

    def _sides_bits(a: Any, b: Any) -> bool:  # the corner views never within (a radius below 0)
        return a.hashes.match_bits(b.phash, *radii.of(a.hashes.structure, b.hashes.structure), -1) is not None

    def _whole_bits(a: Any, b: Any) -> bool:
        return int((a.phash ^ b.phash).bit_count()) <= radius

    def asked(whole_flips: int, views: slice | None, view_flips: int = 0) -> Callable[[Any], list[tuple[int, int]]]:
        return lambda i: [(i.phash, whole_flips)] + ([(v, view_flips) for v in i.hashes.views[views]] if views else [])

    crops, pads, every = slice(0, CROPS), slice(CROPS, 2 * CROPS), slice(0, 2 * CROPS)
    return [
        Scheme("whole", asked(0, None), _whole, _whole_bits),
        Scheme("1-bit probes", asked(1, None), _whole, _whole_bits),
        Scheme("2-bit probes", asked(2, None), _whole, _whole_bits),
        Scheme("crop views both sides", lambda i: [(h, 0) for h in (i.phash, *i.views)],
               lambda i: [i.phash, *i.views], lambda a, b: int(labelled.bits(a, b, "phash_views")) <= radius),
        Scheme("asked: crop views", asked(0, crops), _whole, _views_bits),
        Scheme("asked: pad views", asked(0, pads), _whole, _views_bits),
        Scheme("asked: views", asked(0, every), _whole, _views_bits),
        Scheme("asked: views, 1-bit probes on the whole", asked(1, every), _whole, _views_bits),
        Scheme("asked: views, 1-bit probes on all", asked(1, every, 1), _whole, _views_bits),
        Scheme("asked: views; filed: 4 crop views of 10 %", asked(0, every),
               lambda i: [i.phash, *i.hashes.views[4:8]], _views_bits),
        Scheme("asked: views; filed: + 5 % all round (built)", lambda i: [(h, 0) for h in i.hashes.asked],
               lambda i: list(i.hashes.filed), _views_bits),
        Scheme("asked: views but the corners'; filed: + 5 % all round",
               lambda i: [(h, 0) for p, h in enumerate(i.hashes.asked) if p - 1 not in CORNER_VIEWS],
               lambda i: list(i.hashes.filed), _sides_bits),
        Scheme("asked: views, 1-bit probes on the whole; filed: + 5 % all round", asked(1, every),
               lambda i: [i.phash, i.hashes.views[FILED_VIEW]], _views_bits),
    ]


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


def measure(scheme: Scheme, pairs: Pairs) -> dict[str, Any]:
    """Per direction and kind, the variants found (proposed and a match by the distance); the pairs
    of different photographs proposed and a match (both ways); the cost per image."""
    ways: dict[str, Counter[str]] = {"stored original": Counter(), "stored variant": Counter()}
    for v in pairs.variants:
        o = pairs.originals[v.photo]
        ways["stored original"][v.kind] += all(scheme.found(v, o))
        ways["stored variant"][v.kind] += all(scheme.found(o, v))
    proposed = within = 0
    for i, o in pairs.negatives:
        for a, b in ((i, o), (o, i)):
            p, w = scheme.found(a, b)
            proposed += p
            within += w
    asked, filed = scheme.cost(pairs.variants[0])
    total = len(pairs.variants)
    return {
        "scheme": scheme.name, "keys_asked": asked, "keys_filed": filed, "candidates": asked * filed // 16,
        "found": {way: dict(c) for way, c in ways.items()},
        "recall": {way: round(sum(c.values()) / total, 3) for way, c in ways.items()},
        "different_proposed": proposed, "different_within": within, "different_pairs": 2 * len(pairs.negatives),
    }


def other_crops(pairs: Pairs, photos: dict[str, Any], built: Scheme) -> dict[str, list[int]]:
    """Per crop of :data:`OTHER_CROPS`, of the photographs: [found with the original stored, with
    the crop stored, photographs]."""
    out: dict[str, list[int]] = {}
    for label, box in OTHER_CROPS.items():
        names = [n for n in photos if n in pairs.originals]
        files = [labelled.jpeg(labelled._cropped(*box)(photos[n]), labelled.VARIANT_QUALITY) for n in names]
        found = [0, 0, len(names)]
        for name, outcome in zip(names, hash_files(files), strict=True):
            assert isinstance(outcome, ImageHashes), outcome
            crop = labelled.Item(name, "cropped", label, outcome.phash, outcome.dhash or 0, (), outcome)
            found[0] += all(built.found(crop, pairs.originals[name]))
            found[1] += all(built.found(pairs.originals[name], crop))
        out[label] = found
    return out


RANDOM_FIELDS = 2000


def random_fields(n: int, seed: int = 23) -> list[bytes]:
    """``n`` JPEGs of random gray levels on a coarse grid (4 to 11 cells across), enlarged
    bicubically to 160x120 with noise added, with a fixed seed: many pictures, none a copy of
    another. The smoothest (4 or 5 cells) leave a pHash little to tell apart: most of their pairs
    within the radius are between two of those."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        cells = int(rng.integers(4, 12))
        coarse = Image.fromarray(rng.integers(0, 256, (cells, cells + 2)).astype(np.uint8))
        big = np.asarray(coarse.resize((160, 120), Image.Resampling.BICUBIC), dtype=np.float64)
        noisy = np.clip(big + rng.normal(0, 6, big.shape), 0, 255).astype(np.uint8)
        out.append(labelled.jpeg(Image.fromarray(noisy).convert("RGB"), 90))
    return out


def random_matches(radius: int, view_radii: range, low: ImageRadii) -> dict[str, int]:
    """Ordered pairs of :func:`random_fields` (one asked, the other stored) within ``radius`` by
    their whole pHashes, and within it or with a view within each of ``view_radii`` (a corner view
    within the less of it and ``low.corner_radius``); then with the low-structure radii of ``low``
    (its views' radius the built one), with and without the corner views, and the pictures below
    its structure bound."""
    hashed = [h for h in hash_files(random_fields(RANDOM_FIELDS)) if isinstance(h, ImageHashes)]
    assert len(hashed) == RANDOM_FIELDS
    whole = np.array([h.phash for h in hashed], dtype=np.uint64)
    views = np.array([h.views for h in hashed], dtype=np.uint64)
    structure = np.array([h.structure for h in hashed], dtype=np.int64)
    others = ~np.eye(len(whole), dtype=bool)
    distance = np.bitwise_count(whole[:, None] ^ whole[None, :])
    by_whole = distance <= radius
    side, corner = _nearest_views(views, whole)
    out = {"pairs": int(others.sum()), "whole": int((by_whole & others).sum())}
    out.update({f"view {r}": int(((by_whole | (side <= r) | (corner <= min(r, low.corner_radius))) & others).sum())
                for r in view_radii})
    smooth = np.minimum(structure[:, None], structure[None, :]) < low.low_structure
    held = np.where(smooth, distance <= low.low_radius, by_whole)
    out["whole, low-structure radii"] = int((held & others).sum())
    view_radius = np.where(smooth, low.low_view_radius, low.view_radius)
    by_side = side <= view_radius
    by_corner = corner <= np.minimum(view_radius, low.corner_radius)
    out[f"view {low.view_radius}, low-structure radii"] = int(((held | by_side | by_corner) & others).sum())
    out[f"view {low.view_radius}, low-structure radii, no corner views"] = int(((held | by_side) & others).sum())
    out["low-structure pictures"] = int((structure < low.low_structure).sum())
    return out


def _nearest_views(views: np.ndarray, whole: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, n) bits from each picture's nearest view to each whole pHash: of its side and
    all-round views, and of its corner views."""
    side = np.full((len(whole), len(whole)), 64, dtype=np.uint8)
    corner = side.copy()
    for v in range(views.shape[1]):  # a view at a time: an (n, n) array, not (n, views, n)
        target = corner if v in CORNER_VIEWS else side
        np.minimum(target, np.bitwise_count(views[:, v, None] ^ whole[None, :]), out=target)
    return side, corner


def main() -> None:
    """Print the tables (and write them)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--radius", type=int, default=14)
    parser.add_argument("--view-radius", type=int, default=12)
    parser.add_argument("--low-structure", type=int, default=ImageRadii().low_structure,
                        help="percent structure below which a pair is held to the smaller radii (0: never)")
    parser.add_argument("--json", type=Path, default=default_json_path("image-index", quick=False))
    args = parser.parse_args()
    photos = labelled.photographs()
    pairs = Pairs.of(labelled.hash_set(labelled.labelled_files(photos)))
    kinds = list(Counter(i.kind for i in pairs.variants))
    print(f"{len(pairs.variants)} variant pairs, {len(pairs.negatives)} pairs of different photographs (each both "
          f"ways), radius {args.radius}, views' radius {args.view_radius}")
    results = [measure(s, pairs) for s in schemes(args.radius, args.view_radius, args.low_structure)]
    unheld = next(s for s in schemes(args.radius, args.view_radius) if s.name.endswith("(built)"))
    results.append(measure(replace(unheld, name=unheld.name + ", low-structure radii off"), pairs))
    for r in results:
        print(f"\n{r['scheme']}: keys asked {r['keys_asked']}, filed {r['keys_filed']}, candidates x{r['candidates']}")
        for way, found in r["found"].items():
            print(f"  {way:16s} recall {r['recall'][way]:.3f}  " + "  ".join(f"{k} {found.get(k, 0)}" for k in kinds))
        print(f"  different photographs: proposed {r['different_proposed']}, a match "
              f"{r['different_within']} of {r['different_pairs']}")
    view_radii = range(6, args.radius + 1, 2)
    by_view_radius = {}
    for r in view_radii:
        built_at = next(s for s in schemes(args.radius, r, args.low_structure) if s.name.endswith("(built)"))
        by_view_radius[r] = measure(built_at, pairs)["recall"]
    randoms = random_matches(args.radius, view_radii, ImageRadii(args.radius, args.view_radius, args.low_structure))
    print(f"\nviews' radius: recall of the index as built (original stored / variant stored); "
          f"random-field pairs a match (of {randoms['pairs']}; {randoms['whole']} by the whole pHash alone)")
    for r in view_radii:
        recall = by_view_radius[r]
        print(f"  {r:3d}  {recall['stored original']:.3f} / {recall['stored variant']:.3f}  {randoms[f'view {r}']}")
    built = next(s for s in schemes(args.radius, args.view_radius, args.low_structure) if s.name.endswith("(built)"))
    crops = other_crops(pairs, photos, built)
    sides = next(s for s in schemes(args.radius, args.view_radius, args.low_structure) if "but the corners" in s.name)
    crops_without_corners = other_crops(pairs, photos, sides)
    print("\ncrops not in the set, index as built: found with the original stored / with the crop stored, of; "
          "then without the corner views")
    for label, (a, b, n) in crops.items():
        print(f"  {label:16s} {a:3d} {b:3d} {n:3d}   {crops_without_corners[label][0]:3d} "
              f"{crops_without_corners[label][1]:3d}")
    print("  " + ", ".join(f"{k}: {v}" for k, v in randoms.items() if "low-structure" in k))
    result = {"benchmark": "image-index", "radius": args.radius, "view_radius": args.view_radius,
              "low_structure": args.low_structure,
              "variant_pairs": len(pairs.variants), "different_pairs": len(pairs.negatives), "schemes": results,
              "by_view_radius": by_view_radius, "random_fields": {"pictures": RANDOM_FIELDS, **randoms},
              "other_crops": crops, "other_crops_without_corner_views": crops_without_corners,
              "environment": environment("pillow", "scikit-image")}
    args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"\n{args.json}")


if __name__ == "__main__":
    main()
