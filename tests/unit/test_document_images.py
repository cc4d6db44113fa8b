"""Documents that carry images (issue 23): validation and its evidence, the image rules through the
engine on the memory store and through ``neardup dedup``."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from typing import Any

import numpy as np
import pytest

Image = pytest.importorskip("PIL.Image", reason="Pillow is the image path's dependency (pip install 'neardup[media]')")

from neardup.config import load_settings  # noqa: E402 (Pillow first, or skip)
from neardup.decision import Reason, Status  # noqa: E402
from neardup.document import Document, InvalidDocument, parse_document  # noqa: E402
from neardup.engine import Engine, decide_all  # noqa: E402
from neardup.media.hashes import VIEWS, ImageLimits, hamming  # noqa: E402
from neardup.metrics import REJECT_REASONS  # noqa: E402
from neardup.sketch.index import image_keys  # noqa: E402
from neardup.storage.memory import MemoryFingerprintStore  # noqa: E402

ARTICLE = ("市政府今天召开新闻发布会，介绍今年上半年全市经济运行情况。发言人表示，"
           "上半年全市地区生产总值同比增长百分之五点二，工业增加值和社会消费品零售总额均保持稳定增长，就业形势总体平稳，居民收入持续增加。")
OTHER_ARTICLE = ("本市今年夏季防汛工作部署会议昨天举行。会议要求各区各部门压实防汛责任，加强隐患排查，完善应急预案，"
                 "确保城市安全度汛。气象部门预计今年汛期降水偏多，局地可能出现强降雨。")
METRO = "完全不同的另一篇报道，讲的是本市新开通的地铁线路和沿线的站点设置情况，以及首班车和末班车的时间安排。"


def photo(seed: int = 0, width: int = 320, height: int = 240) -> Any:
    """A picture with structure at several scales: its pHash is neither all zeros nor noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = 128 + 70 * np.sin(x / (30 + 7 * seed)) * np.cos(y / (25 + 3 * seed)) + 40 * np.sin((x + y) / (9 + seed)) \
        + rng.normal(0, 4, (height, width))
    return Image.fromarray(np.clip(base, 0, 255).astype(np.uint8)).convert("RGB")


def jpeg_b64(image: Any, quality: int = 90) -> str:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return base64.b64encode(out.getvalue()).decode("ascii")


def doc(doc_id: str, text: str | None, *images: dict[str, Any], published_at: float | None = None,
        limits: ImageLimits | None = None) -> Document:
    obj: dict[str, Any] = {"id": doc_id, "images": list(images)}
    if text is not None:
        obj["text"] = text
    if published_at is not None:
        obj["published_at"] = published_at
    return parse_document(obj, image_limits=limits)


# --- validation -----------------------------------------------------------------------------------


def test_images_are_hashed_at_validation_with_their_place_and_url() -> None:
    d = doc("a", "图片说明", {"data": jpeg_b64(photo(1)), "url": "https://example.com/p.jpg", "caption": "c"},
            {"phash": "8f373714acfcf4d0"})
    assert [(i.index, i.url) for i in d.images] == [(0, "https://example.com/p.jpg"), (1, None)]
    assert d.images[0].hashes.dhash is not None and d.images[0].hashes.width == 320
    assert d.images[1].hashes.phash == 0x8F373714ACFCF4D0
    assert d.images_rejected == ()


@pytest.mark.parametrize("text", [None, "", "  \n"])
def test_an_empty_text_is_accepted_with_one_usable_image(text: str | None) -> None:
    d = doc("a", text, {"data": "not base64!"}, {"phash": "0123456789abcdef"})
    assert d.text.strip() == ""
    assert [i.index for i in d.images] == [1]
    assert [(r.index, r.reason) for r in d.images_rejected] == [(0, "image_bad_base64")]


@pytest.mark.parametrize(("images", "why"), [
    ([{"data": base64.b64encode(b"GIF89a garbage").decode()}], "image 0: image_undecodable"),
    ([{"phash": "xyz"}, {"data": "%%%"}], "image 0: image_bad_hash: phash must be 16 hex digits"),
    ([], "images is an empty list"),
    ("not a list", "image 0: image_bad_entry"),
])
def test_no_text_and_no_usable_image_is_rejected_with_one_line(images: Any, why: str) -> None:
    with pytest.raises(InvalidDocument) as err:
        parse_document({"id": "a", "text": "", "images": images})
    assert err.value.reason == "no_usable_image"
    assert why in err.value.detail and "\n" not in err.value.detail
    assert err.value.reason in REJECT_REASONS


def test_without_images_an_empty_text_is_still_empty_text() -> None:
    with pytest.raises(InvalidDocument) as err:
        parse_document({"id": "a", "text": ""})
    assert err.value.reason == "empty_text"
    with pytest.raises(InvalidDocument) as missing:
        parse_document({"id": "a"})
    assert missing.value.reason == "missing_text"


def test_bad_images_never_reject_a_document_with_text() -> None:
    limits = ImageLimits(max_images=2, max_bytes=2000)
    big = jpeg_b64(photo(3, 640, 480), quality=95)
    d = doc("a", ARTICLE, {"data": big}, {"phash": "12"}, {"data": jpeg_b64(photo(4))}, {"nothing": 1},
            limits=limits)
    assert d.text == ARTICLE and d.images == ()
    assert [(r.index, r.reason) for r in d.images_rejected] == [
        (0, "image_too_large"), (1, "image_bad_hash"), (2, "too_many_images")]
    assert "over the limit of 2000 bytes" in d.images_rejected[0].detail
    assert d.images_rejected[2].detail == "images 3 to 4 are over the limit of 2 images a document: not decoded"


def test_a_huge_images_list_is_one_reject_in_the_evidence() -> None:
    entries = [{"data": jpeg_b64(photo(1))}] + [{"data": "not base64, never read"}] * 200_000
    d = doc("a", ARTICLE, *entries, limits=ImageLimits(max_images=1))
    assert len(d.images) == 1
    assert [(r.index, r.reason) for r in d.images_rejected] == [(1, "too_many_images")]
    assert "images 2 to 200001" in d.images_rejected[0].detail


def test_a_decompression_bomb_is_a_rejected_image() -> None:
    bomb = Image.new("L", (3000, 3000))
    out = io.BytesIO()
    bomb.save(out, "PNG")
    d = doc("a", ARTICLE, {"data": base64.b64encode(out.getvalue()).decode()},
            limits=ImageLimits(max_pixels=1_000_000))
    assert [(r.index, r.reason) for r in d.images_rejected] == [(0, "image_too_large")]
    assert "1000000 pixels" in d.images_rejected[0].detail


def test_image_limits_come_from_the_settings() -> None:
    from neardup.media.hashes import limits_of

    s = load_settings(images={"max_images": 3, "max_bytes": 1000, "max_pixels": 5000})
    assert limits_of(s.images) == ImageLimits(max_images=3, max_bytes=1000, max_pixels=5000)
    assert limits_of(load_settings(images={"views": False}).images).views is False


def test_hamming_of_a_photo_and_its_recompressed_copy_is_small() -> None:
    a = doc("a", "", {"data": jpeg_b64(photo(5), 95)}).images[0].hashes.phash
    b = doc("b", "", {"data": jpeg_b64(photo(5).resize((240, 180)), 40)}).images[0].hashes.phash
    c = doc("c", "", {"data": jpeg_b64(photo(9), 95)}).images[0].hashes.phash
    assert hamming(a, b) <= 4 < 14 < hamming(a, c)


# --- the engine: rejected images in the evidence ----------------------------------------------------


async def engine(**overrides: Any) -> Engine:
    overrides.setdefault("store_url", "memory://")
    return await Engine.open(load_settings(worker_id="test", **overrides))


async def test_rejected_images_are_in_the_evidence_and_the_text_is_decided() -> None:
    eng = await engine()
    first, reprint = await decide_all(eng, [
        doc("a", ARTICLE, published_at=1.7e9),
        doc("b", ARTICLE + "（转载）", {"data": "@@"}, {"phash": "nothex0000000000"}, published_at=1.7e9 + 60),
    ], 10)
    assert first.status is Status.UNIQUE and "images_rejected" not in first.evidence.to_dict()
    assert reprint.status is Status.DUPLICATE and reprint.duplicate_of == "a"
    ev = reprint.evidence.to_dict()
    assert [(r["index"], r["reason"]) for r in ev["images_rejected"]] == [(0, "image_bad_base64"),
                                                                         (1, "image_bad_hash")]
    back = json.loads(json.dumps(reprint.to_record()))["evidence"]
    assert back["images_rejected"][1]["detail"].startswith("phash must be 16 hex digits")
    replay = (await decide_all(eng, [reprint.doc], 10))[0]
    assert replay.evidence.replay and replay.evidence.images_rejected == reprint.evidence.images_rejected
    assert Reason(ev["reason"]) is not Reason.UNIQUE


# --- the image rules through the engine -------------------------------------------------------------
T0 = 1.7e9


async def test_a_caption_with_an_earlier_documents_photo_is_an_image_duplicate() -> None:
    eng = await engine()
    original = doc("story", ARTICLE, {"data": jpeg_b64(photo(1))}, published_at=T0)
    await decide_all(eng, [original], 10)
    copy = jpeg_b64(photo(1).resize((240, 180)), quality=45)  # resized and recompressed
    empty, caption = await decide_all(eng, [
        doc("repost", "", {"data": jpeg_b64(photo(7))}, {"data": copy}, published_at=T0 + 60),
        doc("caption", "图：发布会现场", {"data": copy}, published_at=T0 + 120),
    ], 10)
    for d in (empty, caption):
        assert d.status is Status.DUPLICATE and d.duplicate_of == "story", d.evidence.to_dict()
        ev = d.evidence.to_dict()
        assert ev["reason"] == "image" and ev["rule"] == "image" and ev["matched_id"] == "story"
        assert ev["image"]["against"] == "story" and ev["image"]["their_image"] == 0
        assert 0 <= ev["image"]["hamming"] <= ev["image"]["radius"] == 14
    assert empty.evidence.image is not None and empty.evidence.image.image == 1  # its second image matched
    assert caption.evidence.image is not None and caption.evidence.image.image == 0


def cropped(image: Any, left: float, top: float, right: float, bottom: float) -> Any:
    """``image`` with those fractions cut off its sides."""
    w, h = image.size
    return image.crop((round(w * left), round(h * top), round(w * (1 - right)), round(h * (1 - bottom))))


def block_keys(*phashes: int) -> set[int]:
    return set(image_keys(np.array(phashes, dtype=np.uint64)).ravel().tolist())


# (photo seed, fractions cut off): crops that move the whole pHash past the radius and out of every block
CROPS = [(6, (0, 0.1, 0, 0)), (4, (0.05, 0.05, 0.05, 0.05)), (8, (0.1, 0, 0, 0))]


@pytest.mark.parametrize(("seed", "box"), CROPS)
async def test_a_crop_of_an_earlier_photo_is_found_by_its_views_either_way(seed: int, box: Any) -> None:
    """A crop of a tenth moves this photograph's whole pHash 14-22 bits and changes every block of
    it: the whole pHash alone neither proposes the story nor matches it. The crop's pad views and
    the photograph's crop views do, whichever of the two is stored first (docs/media.md)."""
    whole = doc("x", "", {"data": jpeg_b64(photo(seed))}).images[0].hashes
    part = doc("y", "", {"data": jpeg_b64(cropped(photo(seed), *box))}).images[0].hashes
    assert hamming(whole.phash, part.phash) >= 14 and not block_keys(whole.phash) & block_keys(part.phash)
    assert len(whole.views) == len(part.views) == 2 * len(VIEWS)
    files = {id(whole): jpeg_b64(photo(seed)), id(part): jpeg_b64(cropped(photo(seed), *box))}
    for first, later in ((whole, part), (part, whole)):
        story = doc("story", ARTICLE, {"data": files[id(first)]}, published_at=T0)
        repost = doc("repost", "", {"data": files[id(later)]}, published_at=T0 + 60)
        eng = await engine()
        assert (await decide_all(eng, [story], 10))[0].status is Status.UNIQUE
        got = (await decide_all(eng, [repost], 10))[0]  # another window: the store's image index
        assert got.status is Status.DUPLICATE and got.duplicate_of == "story", got.evidence.to_dict()
        assert got.evidence.image is not None and got.evidence.reason is Reason.IMAGE
        bits = later.match_bits(first.phash, 14, 12)
        assert bits is not None and got.evidence.image.hamming == bits <= 12 < hamming(first.phash, later.phash)
        same_window = await decide_all(await engine(), [story, repost], 10)  # the window's earlier rows
        assert [x.duplicate_of for x in same_window] == [None, "story"]
        assert same_window[1].evidence.reason is Reason.IMAGE


async def test_without_views_a_crop_is_not_found() -> None:
    """``images.views`` off (the limits validation hashes with): one pHash an image, filed and
    asked, and the crop of the test above stays unique."""
    settings = load_settings(worker_id="test", store_url="memory://", images={"views": False})
    limits = ImageLimits(views=False)
    seed, box = CROPS[0]
    eng = await Engine.open(settings)
    story, repost = await decide_all(eng, [
        doc("story", ARTICLE, {"data": jpeg_b64(photo(seed))}, published_at=T0, limits=limits),
        doc("repost", "", {"data": jpeg_b64(cropped(photo(seed), *box))}, published_at=T0 + 60, limits=limits),
    ], 10)
    assert story.doc.images[0].hashes.views == () == repost.doc.images[0].hashes.views
    assert story.status is Status.UNIQUE and repost.status is Status.UNIQUE and repost.evidence.image is None


async def test_a_text_reprint_stays_a_reprint_whatever_its_photos() -> None:
    eng = await engine()
    first, reprint = await decide_all(eng, [
        doc("a", ARTICLE, {"data": jpeg_b64(photo(1))}, published_at=T0),
        doc("b", ARTICLE, {"data": jpeg_b64(photo(8))}, published_at=T0 + 60),  # another photo
    ], 10)
    assert first.status is Status.UNIQUE
    assert reprint.status is Status.DUPLICATE and reprint.duplicate_of == "a"
    assert reprint.evidence.reason is Reason.EXACT and reprint.evidence.image is None
    near = (await decide_all(eng, [doc("c", ARTICLE + "（来源：新华社）", published_at=T0 + 90)], 10))[0]
    assert near.status is Status.DUPLICATE and near.evidence.reason is Reason.NEAR  # no photo at all


async def test_different_texts_sharing_a_photo_stay_unique_and_say_so() -> None:
    eng = await engine()
    stock = jpeg_b64(photo(2))
    first, second = await decide_all(eng, [
        doc("flood", OTHER_ARTICLE, {"data": stock}, published_at=T0),
        doc("economy", ARTICLE, {"phash": "0000000000000000"}, {"data": stock}, published_at=T0 + 60),
    ], 10)
    assert first.status is Status.UNIQUE and first.evidence.shared_image is None
    assert second.status is Status.UNIQUE and second.duplicate_of is None
    ev = second.evidence.to_dict()
    assert ev["reason"] == "unique" and "image" not in ev
    assert ev["shared_image"] == {"against": "flood", "hamming": 0, "image": 1, "their_image": 0, "radius": 14}
    # the same against the store (another window), not only inside one
    third = (await decide_all(eng, [doc("later", METRO, {"data": stock}, published_at=T0 + 120)], 10))[0]
    assert third.status is Status.UNIQUE and third.evidence.shared_image is not None
    assert third.evidence.shared_image.against == "flood"


async def test_captions_with_different_photos_are_not_duplicates() -> None:
    eng = await engine()
    a, b, c = await decide_all(eng, [
        doc("a", "图片新闻", {"data": jpeg_b64(photo(1))}, published_at=T0),
        doc("b", "图片新闻", {"data": jpeg_b64(photo(9))}, published_at=T0 + 1),
        doc("c", "图片新闻", {"data": jpeg_b64(photo(1))}, published_at=T0 + 2),
    ], 10)
    assert a.status is Status.UNIQUE and b.status is Status.UNIQUE and b.evidence.image is None
    assert c.status is Status.DUPLICATE and c.duplicate_of == "a" and c.evidence.reason is Reason.EXACT
    d = (await decide_all(eng, [doc("d", "", {"data": jpeg_b64(photo(9), 60)}, published_at=T0 + 3)], 10))[0]
    assert d.status is Status.DUPLICATE and d.duplicate_of == "b" and d.evidence.reason is Reason.IMAGE


async def test_an_image_duplicate_replays_and_is_decided_the_same_on_a_file_store(tmp_path: Any) -> None:
    docs = [doc("a", ARTICLE, {"data": jpeg_b64(photo(3))}, published_at=T0),
            doc("b", "", {"data": jpeg_b64(photo(3), 50)}, published_at=T0 + 5)]
    eng = await engine(store_url=f"file://{tmp_path / 'store'}")
    first = await decide_all(eng, docs, 1)
    await eng.close()
    again = await engine(store_url=f"file://{tmp_path / 'store'}")
    replay = await decide_all(again, docs, 10)
    late = (await decide_all(again, [doc("c", "", {"data": jpeg_b64(photo(3), 70)}, published_at=T0 + 9)], 10))[0]
    await again.close()
    assert [d.duplicate_of for d in first] == [None, "a"] and first[1].evidence.reason is Reason.IMAGE
    assert all(d.evidence.replay for d in replay) and replay[1].evidence.image == first[1].evidence.image
    assert late.duplicate_of == "a" and late.evidence.reason is Reason.IMAGE  # from the reopened store's index


def test_neardup_dedup_decides_images_and_rejects_a_document_with_nothing_usable(tmp_path: Any) -> None:
    from tests.unit.test_cli import neardup, read_jsonl

    photo_a, stock = jpeg_b64(photo(1)), jpeg_b64(photo(2))
    rows = [
        {"id": "story", "text": ARTICLE, "images": [{"data": photo_a, "url": "https://example.com/a.jpg"}],
         "published_at": T0},
        {"id": "repost", "images": [{"data": jpeg_b64(photo(1).resize((200, 150)), 50)}], "published_at": T0 + 1},
        {"id": "flood", "text": OTHER_ARTICLE, "images": [{"data": stock}], "published_at": T0 + 2},
        {"id": "metro", "text": METRO, "images": [{"data": stock}], "published_at": T0 + 3},
        {"id": "broken", "text": "", "images": [{"data": "@@@"}, {"phash": "zz"}], "published_at": T0 + 4},
        {"id": "bad-photo", "text": OTHER_ARTICLE + "（完）", "images": [{"data": base64.b64encode(b"no").decode()}],
         "published_at": T0 + 5},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out, rej = tmp_path / "out.jsonl", tmp_path / "rejects.jsonl"
    res = neardup("dedup", str(src), "-o", str(out), "--rejects", str(rej), "-q",
                  env={"NEARDUP_IMAGES__MAX_IMAGES": "4"})
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    got: dict[str, Any] = {str(d["id"]): d for d in read_jsonl(out)}
    assert set(got) == {"story", "repost", "flood", "metro", "bad-photo"}
    assert got["repost"]["status"] == "duplicate" and got["repost"]["duplicate_of"] == "story"
    assert got["repost"]["evidence"]["reason"] == "image" and got["repost"]["evidence"]["image"]["against"] == "story"
    assert got["metro"]["status"] == "unique"  # a shared stock photo is not a reprint
    assert got["metro"]["evidence"]["shared_image"]["against"] == "flood"
    assert got["bad-photo"]["status"] == "duplicate" and got["bad-photo"]["duplicate_of"] == "flood"
    assert got["bad-photo"]["evidence"]["images_rejected"][0]["reason"] == "image_undecodable"
    [rejected] = read_jsonl(rej)
    assert rejected["reason"] == "no_usable_image" and "image 0: image_bad_base64" in str(rejected["error"])


# --- explain ---------------------------------------------------------------------------------------


async def test_explain_reports_the_images_and_the_image_evidence_in_words() -> None:
    from neardup.explain import explain_pair, format_report

    settings = load_settings(worker_id="test")
    a = {"id": "story", "text": ARTICLE, "images": [{"data": jpeg_b64(photo(1)), "url": "https://example.com/a.jpg"}]}
    b = {"id": "repost", "text": "", "images": [{"data": "@@"}, {"data": jpeg_b64(photo(1), 40)}]}
    report = await explain_pair(settings, a, b)
    imgs = report["images"]
    assert [i["url"] for i in imgs["a"]] == ["https://example.com/a.jpg"] and imgs["b"][0]["index"] == 1
    assert imgs["b_rejected"][0]["reason"] == "image_bad_base64"
    near = imgs["nearest"]
    assert (near["a_image"], near["b_image"], near["within_radius"]) == (0, 1, True) and near["phash_hamming"] <= 4
    d = report["decision_for_b_after_a"]
    assert d["status"] == "duplicate" and d["evidence"]["image"]["hamming"] == near["phash_hamming"]
    text = format_report(report)
    assert "images of A: image 0 pHash " in text and "(https://example.com/a.jpg)" in text
    assert "image 0 not used: image_bad_base64" in text
    assert f"A's image 0 and B's image 1 differ by {near['phash_hamming']} pHash bits" in text
    assert "within the radius of 14" in text
    assert "decision for B after A: duplicate of story" in text
    assert f"by its image: image 1 is story's image 0 ({near['phash_hamming']} pHash bits apart, radius 14)" in text
    plain = await explain_pair(settings, {"id": "A", "text": ARTICLE}, {"id": "B", "text": OTHER_ARTICLE})
    assert plain["images"] is None and "images of" not in format_report(plain)


async def test_explain_measures_a_crop_as_the_image_rule_does() -> None:
    """B's nearest view to A's whole pHash is the distance the rule decides on; the whole pHashes'
    own distance is shown beside it."""
    from neardup.explain import explain_pair, format_report

    seed, box = CROPS[0]
    a = {"id": "story", "text": ARTICLE, "images": [{"data": jpeg_b64(photo(seed))}]}
    b = {"id": "crop", "text": "", "images": [{"data": jpeg_b64(cropped(photo(seed), *box))}]}
    report = await explain_pair(load_settings(worker_id="test"), a, b)
    near = report["images"]["nearest"]
    assert near["phash_hamming"] <= 12 < 14 < near["whole_phash_hamming"] and near["within_radius"]
    assert report["decision_for_b_after_a"]["evidence"]["image"]["hamming"] == near["phash_hamming"]
    text = format_report(report)
    assert (f"differ by {near['phash_hamming']} pHash bits from B's nearest view "
            f"({near['whole_phash_hamming']} whole to whole), dHash ") in text
    assert "bits, within the views' radius of 12" in text


def test_neardup_explain_names_a_shared_photograph(tmp_path: Any) -> None:
    from tests.unit.test_cli import neardup

    stock = jpeg_b64(photo(2))
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [
        {"id": "flood", "text": OTHER_ARTICLE, "images": [{"data": stock}]},
        {"id": "metro", "text": METRO, "images": [{"data": jpeg_b64(photo(2), 60)}]},
    ]), encoding="utf-8")
    res = neardup("explain", "--file", str(src), "flood", "metro")
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    out = res.stdout.decode()
    assert "decision for B after A: unique" in out
    assert "shares a photograph with flood: image 0 is its image 0 (" in out
    assert "the photograph alone does not make a duplicate" in out


# --- the library and the workers' decoding ----------------------------------------------------------


def test_the_library_decides_images_with_the_settings_limits() -> None:
    from neardup import Deduplicator

    settings = load_settings(worker_id="test", images={"max_images": 1})
    with Deduplicator(settings=settings) as dedup:
        first = dedup.decide({"id": "a", "text": ARTICLE, "images": [{"data": jpeg_b64(photo(4))}],
                              "published_at": T0})
        second = dedup.decide({"id": "b", "images": [{"data": jpeg_b64(photo(4), 50)}, {"data": "@"}],
                               "published_at": T0 + 1})
        with pytest.raises(InvalidDocument, match="no_usable_image"):
            dedup.decide({"id": "c", "text": " ", "images": [{"phash": "not-hex"}]})
    assert first.status is Status.UNIQUE
    assert second.status is Status.DUPLICATE and second.duplicate_of == "a" and second.evidence.reason is Reason.IMAGE
    assert [(r.index, r.reason) for r in second.evidence.images_rejected] == [(1, "too_many_images")]


def test_a_worker_decodes_images_and_dead_letters_a_message_with_nothing_usable() -> None:
    from neardup.agents.dedup import decode_document

    settings = load_settings(worker_id="test", images={"max_bytes": 100})
    ok = decode_document(json.dumps({"id": "a", "text": "", "images": [{"phash": "00ff00ff00ff00ff"}]}).encode(),
                         settings)
    assert [i.hashes.phash_hex for i in ok.images] == ["00ff00ff00ff00ff"]
    with pytest.raises(InvalidDocument) as err:
        decode_document(json.dumps({"id": "b", "text": "", "images": [{"data": jpeg_b64(photo(1))}]}).encode(),
                        settings)
    assert err.value.reason == "no_usable_image" and "image_too_large" in err.value.detail


# --- the review page's thumbnails -----------------------------------------------------------------------


def test_review_thumbnails_are_made_here_from_the_images_the_evidence_names() -> None:
    from neardup.review.thumbnails import images_html, thumbnail

    limits = ImageLimits()
    a = {"id": "story", "text": ARTICLE, "images": [{"data": "@@"}, {"phash": "0f0f0f0f0f0f0f0f"},
                                                   {"data": jpeg_b64(photo(1, 800, 600))}]}
    b = {"id": "repost", "text": "", "images": [{"data": jpeg_b64(photo(1), 40)}]}
    match: dict[str, Any] = {"against": "story", "hamming": 2, "image": 0, "their_image": 1, "radius": 14}
    evidence: dict[str, Any] = {"reason": "image", "image": match}
    html = images_html(evidence, a, b, "story", limits)
    assert html.count('<img src="data:image/jpeg;base64,') == 2
    assert "A image 2" in html and "B image 0" in html  # A's second usable image is its entry 2
    assert "2 pHash bits apart (radius 14): B is a duplicate of A by this photograph" in html
    url = thumbnail(a["images"][2], limits)
    assert url is not None
    small = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert small.format == "JPEG" and max(small.size) == 200 and small.mode == "L"
    only_hash = {**evidence, "image": {**match, "their_image": 0}}
    assert "no picture (a pHash only" in images_html(only_hash, a, b, "story", limits)
    shared = {"reason": "unique", "shared_image": {**match, "hamming": 0}}
    assert "a photograph both share; the texts decided" in images_html(shared, a, b, "story", limits)
    assert images_html(shared, a, b, "someone-else", limits) == ""
    assert images_html({"reason": "near"}, a, b, "story", limits) == ""


def test_a_review_thumbnail_of_a_bomb_or_garbage_is_no_picture() -> None:
    from neardup.review.thumbnails import thumbnail

    bomb = Image.new("L", (3000, 3000))
    out = io.BytesIO()
    bomb.save(out, "PNG")
    limits = ImageLimits(max_pixels=1_000_000)
    assert thumbnail({"data": base64.b64encode(out.getvalue()).decode()}, limits) is None
    assert thumbnail({"data": "not base64"}, limits) is None
    assert thumbnail({"phash": "0123456789abcdef"}, limits) is None
    assert thumbnail("not an entry", limits) is None


class StoryFirstStore(MemoryFingerprintStore):
    """Both workers look up before either commits (both first passes see an empty store); the
    story's record is filed before the caption's, so the caption's recheck as it is filed finds it."""

    def __init__(self) -> None:
        super().__init__()
        self.looked = asyncio.Barrier(2)
        self.story_filed = asyncio.Event()

    async def lookup(self, query: Any) -> Any:
        answer = await super().lookup(query)
        await self.looked.wait()
        return answer

    async def commit(self, claims: Any, records: Any, recheck: Any = ()) -> Any:
        story = any(r.doc_id.startswith("story") for r in records)
        if not story:
            await self.story_filed.wait()
        answer = await super().commit(claims, records, recheck)
        if story:
            self.story_filed.set()
        return answer


async def test_a_caption_racing_the_story_whose_photograph_it_holds_yields_to_it() -> None:
    """Two workers: the story and a caption-less repost of its photograph, decided at the same
    moment; the repost's recheck finds the story filed meanwhile and yields to it (race)."""
    for k in range(2):
        store = StoryFirstStore()
        settings = load_settings(worker_id="w1", store_url="memory://")
        w1, w2 = Engine(settings, store), Engine(settings.model_copy(update={"worker_id": "w2"}), store)
        # k 0: published the same second, the repost's id first (it waits for the story's decision);
        # k 1: the story a second earlier (the repost yields at once)
        story = doc(f"story{k}", ARTICLE, {"data": jpeg_b64(photo(1 + k))}, published_at=T0 - k)
        repost = doc(f"repost{k}", "", {"data": jpeg_b64(photo(1 + k), 50)}, published_at=T0)
        (ds,), (dr,) = await asyncio.gather(w1.decide([story]), w2.decide([repost]))
        assert ds.status is Status.UNIQUE
        assert dr.status is Status.DUPLICATE and dr.duplicate_of == story.id, dr.evidence.to_dict()
        assert dr.evidence.reason is Reason.IMAGE and dr.evidence.race is True and dr.evidence.image is not None


class CaptionFirstStore(StoryFirstStore):
    """As :class:`StoryFirstStore`, the other way round: the caption's record is filed first, so
    its recheck finds nothing and only the story's recheck finds the caption."""

    async def commit(self, claims: Any, records: Any, recheck: Any = ()) -> Any:
        story = any(r.doc_id.startswith("story") for r in records)
        if story:
            await self.story_filed.wait()  # here: the caption filed
        answer = await MemoryFingerprintStore.commit(self, claims, records, recheck)
        if not story:
            self.story_filed.set()
        return answer


async def test_a_caption_filed_before_the_story_it_races_stays_unique() -> None:
    """The race the other way (docs/media.md, Not yet): the caption is filed first and its recheck
    finds nothing, and a story is never a caption's duplicate, so both stay unique: the caption's
    decision is written, and may be out, before the story's recheck finds it."""
    store = CaptionFirstStore()
    settings = load_settings(worker_id="w1", store_url="memory://")
    w1, w2 = Engine(settings, store), Engine(settings.model_copy(update={"worker_id": "w2"}), store)
    story = doc("story", ARTICLE, {"data": jpeg_b64(photo(3))}, published_at=T0 - 1)
    repost = doc("repost", "", {"data": jpeg_b64(photo(3), 50)}, published_at=T0)
    (ds,), (dr,) = await asyncio.gather(w1.decide([story]), w2.decide([repost]))
    assert ds.status is Status.UNIQUE and dr.status is Status.UNIQUE, (ds.evidence.to_dict(), dr.evidence.to_dict())
    assert dr.evidence.image is None and dr.evidence.race is not True
    # a later window finds both and names the story, the earlier one
    store.looked = asyncio.Barrier(1)  # one worker now
    later = (await decide_all(w1, [doc("late", "", {"data": jpeg_b64(photo(3), 70)}, published_at=T0 + 5)], 10))[0]
    assert later.duplicate_of == "story" and later.evidence.reason is Reason.IMAGE


async def test_a_workers_window_of_photographs_is_validated_off_the_event_loop() -> None:
    """Decoding images takes milliseconds each: the worker validates a window in a thread, so the
    event loop (the broker's heartbeats, the web views) keeps running meanwhile."""
    import threading

    from neardup.agents.dedup import BatchProcessor, InMessage, Output

    settings = load_settings(worker_id="test", store_url="memory://")
    eng = await Engine.open(settings)
    proc = BatchProcessor(eng, settings)
    decoded_in: list[int] = []
    original = proc.decode_all

    def spy(msgs: Any) -> Any:
        decoded_in.append(threading.get_ident())
        return original(msgs)

    proc.decode_all = spy  # type: ignore[method-assign]
    values = [{"id": "a", "text": ARTICLE, "images": [{"data": jpeg_b64(photo(6))}], "published_at": T0},
              {"id": "b", "text": "", "images": [{"data": jpeg_b64(photo(6), 45)}], "published_at": T0 + 1},
              {"id": "c", "text": "", "images": [{"data": "@@"}]}]
    msgs = [InMessage(value=json.dumps(v).encode(), key=None, topic="raw", partition=0, offset=i)
            for i, v in enumerate(values)]
    outs = await proc.process(msgs)
    assert decoded_in and decoded_in[0] != threading.get_ident()
    assert [o.output for o in outs] == [Output.UNIQUE, Output.DUPLICATE, Output.DEAD_LETTER]
    assert json.loads(outs[1].value)["evidence"]["reason"] == "image"
    assert json.loads(outs[2].value)["reason"] == "no_usable_image"


# --- pictures of little structure -----------------------------------------------------------------


def blurred_fields(seed: int, n: int) -> list[str]:
    """``n`` pictures of random gray levels on a 6x4 grid, enlarged bicubically with a little noise
    (bench/image_index.py's smoothest random fields): no two are copies of each other."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        coarse = Image.fromarray(rng.integers(0, 256, (4, 6)).astype(np.uint8))
        big = np.asarray(coarse.resize((160, 120), Image.Resampling.BICUBIC), dtype=np.float64)
        out.append(jpeg_b64(Image.fromarray(np.clip(big + rng.normal(0, 6, big.shape), 0, 255).astype(np.uint8))))
    return out


async def test_two_blurred_fields_within_the_usual_radius_are_not_image_duplicates() -> None:
    """Two different blurred fields whose pHashes come within 14 bits by chance (their variance
    lies nearly all in the frequencies the hash reads): with the low-structure radii turned off
    the second caption is the first's image duplicate, with them (the default) it stays unique,
    and a resized, recompressed copy of the field is still found."""
    fields = blurred_fields(1, 23)  # the 9th and the 23rd: 12 bits apart, a block shared
    first = doc("first", "图一", {"data": fields[8]}, published_at=T0)
    chance = doc("chance", "图二", {"data": fields[22]}, published_at=T0 + 60)
    a, b = first.images[0].hashes, chance.images[0].hashes
    assert a.structure is not None and b.structure is not None and max(a.structure, b.structure) < 5
    assert b.match_bits(a.phash, 14, 12) is not None and b.match_bits(a.phash, 10, 8) is None
    off = await decide_all(await engine(images={"low_structure": 0}), [first, chance], 10)
    assert off[1].status is Status.DUPLICATE and off[1].evidence.reason is Reason.IMAGE
    default = await decide_all(await engine(), [first, chance], 10)
    assert default[1].status is Status.UNIQUE and default[1].evidence.image is None
    field = Image.open(io.BytesIO(base64.b64decode(fields[8])))
    copy = doc("copy", "图一", {"data": jpeg_b64(field.resize((240, 180)), 60)}, published_at=T0 + 120)
    found = (await decide_all(await engine(), [first, chance, copy], 10))[2]
    assert found.status is Status.DUPLICATE and found.duplicate_of == "first", found.evidence.to_dict()
    assert found.evidence.image is not None and found.evidence.image.radius == 10


# --- eval -----------------------------------------------------------------------------------------


def test_neardup_eval_scores_image_duplicates_and_shows_their_distance(tmp_path: Any) -> None:
    """A labelled set whose documents carry photographs: a caption with the story's photograph
    (resized, recompressed) is merged by the image rule and counts for recall; two texts sharing
    a stock photo stay apart; the table and metrics.json give each pair's pHash bits and radius,
    and the images are hashed under the settings' limits (one image a document here: the story's
    second is over the limit, so the pair is measured on the first)."""
    from tests.unit.test_cli import neardup

    rows = [
        {"id": "story", "text": ARTICLE, "images": [{"data": jpeg_b64(photo(1))}, {"data": jpeg_b64(photo(4))}],
         "published_at": T0},
        {"id": "caption", "text": "图：发布会现场", "images": [{"data": jpeg_b64(photo(1).resize((240, 180)), 50)}],
         "published_at": T0 + 60},
        {"id": "flood", "text": OTHER_ARTICLE, "images": [{"data": jpeg_b64(photo(2))}], "published_at": T0 + 120},
        {"id": "metro", "text": METRO, "images": [{"data": jpeg_b64(photo(2))}], "published_at": T0 + 180},
        {"id": "plain", "text": ARTICLE + "（完）", "published_at": T0 + 240},
    ]
    docs, pairs = tmp_path / "docs.jsonl", tmp_path / "pairs.jsonl"
    docs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    labelled = [{"a": "story", "b": "caption", "label": 1, "kind": "photo caption"},
                {"a": "flood", "b": "metro", "label": 0, "kind": "stock photo"},
                {"a": "story", "b": "plain", "label": 1, "kind": "reprint"}]
    pairs.write_text("".join(json.dumps(p) + "\n" for p in labelled), encoding="utf-8")
    res = neardup("eval", "--docs", str(docs), "--pairs", str(pairs), "--report", str(tmp_path / "report"),
                  env={"NEARDUP_IMAGES__MAX_IMAGES": "1"})
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    out = res.stdout.decode()
    assert "pairs with images on both sides 2" in out
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())
    assert metrics["recall"] == 1.0 and metrics["hard_negative_fpr"] == 0.0, out
    caption, stock = metrics["image_pairs"]
    assert (caption["a"], caption["b"], caption["merged"], caption["within_radius"]) == ("story", "caption", True, True)
    assert caption["phash_hamming"] <= caption["radius"] == 14
    assert (stock["a"], stock["label"], stock["merged"], stock["phash_hamming"]) == ("flood", 0, False, 0)
    story_line = next(line for line in out.splitlines() if line.startswith("story ") and "caption" in line)
    assert story_line.split()[2:] == ["1", "yes", str(caption["phash_hamming"]), "14", "yes"]


async def test_a_corner_crop_is_found_by_the_corner_views() -> None:
    """A tenth cut off the left and the top moves this photograph's pHash 28 bits and no side view
    comes within 12 of it; the original's corner view with the same cut is 2 bits from the stored
    crop, within the corner views' radius (10) and not within 0."""
    whole, corner = jpeg_b64(photo(1)), jpeg_b64(cropped(photo(1), 0.1, 0.1, 0, 0))
    story = doc("story", ARTICLE, {"data": corner}, published_at=T0)
    repost = doc("repost", "", {"data": whole}, published_at=T0 + 60)
    a, b = story.images[0].hashes, repost.images[0].hashes
    assert hamming(a.phash, b.phash) >= 14 and b.match_bits(a.phash, 14, 12, -1) is None
    found = await decide_all(await engine(), [story, repost], 10)
    assert found[1].status is Status.DUPLICATE and found[1].duplicate_of == "story", found[1].evidence.to_dict()
    assert found[1].evidence.image is not None and found[1].evidence.image.hamming <= 10
    strict = await decide_all(await engine(images={"corner_radius": 0}), [story, repost], 10)
    assert strict[1].status is Status.UNIQUE
