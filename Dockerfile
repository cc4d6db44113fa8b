# neardup worker image.
#
#   docker build -t neardup .                       # the core + the kafka, redis and archive extras (a worker)
#   docker build --build-arg EXTRAS=kafka,redis,bench -t neardup:bench .   # + the bench peers (neardup bench)
#   docker run --rm neardup dedup - < docs.jsonl    # any subcommand; the default is `worker`
#
# Every Python package comes pinned from requirements.lock (used as constraints, so the image gets
# the runtime subset of the lock). All but jieba install from wheels; jieba is a pure-Python sdist
# and builds without a compiler.

# the base image by exact version (a rebuild gets the same interpreter and Debian release); bump
# it on purpose, together with the lock
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm

# ------------------------------------------------------------------------------------------ build
FROM ${PYTHON_IMAGE} AS build

ARG UV_VERSION=0.13.8
# the worker's extras (pyproject.toml): Kafka transport, the Redis store and the cold tier (PostgreSQL);
# add parquet, plots, bench at will
ARG EXTRAS="kafka,redis,archive"
ENV UV_NO_CACHE=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_PYTHON_DOWNLOADS=never \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

RUN pip install "uv==${UV_VERSION}" \
 && uv venv --python /usr/local/bin/python /opt/neardup

WORKDIR /src

# dependencies first: this layer changes only with the lock or pyproject.toml
COPY pyproject.toml requirements.lock ./
RUN extras=""; \
    for e in $(echo "${EXTRAS}" | tr ',' ' '); do extras="${extras} --extra ${e}"; done; \
    uv pip install --python /opt/neardup/bin/python --compile-bytecode -r pyproject.toml ${extras} -c requirements.lock

COPY config ./config
COPY storage ./storage
COPY service ./service
COPY agents ./agents
COPY bench/suite ./bench/suite
RUN uv pip install --python /opt/neardup/bin/python --compile-bytecode --no-deps . \
 && /opt/neardup/bin/neardup --help > /dev/null

# ---------------------------------------------------------------------------------------- runtime
FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="neardup" \
      org.opencontainers.image.description="Streaming near-duplicate detection for crawled text" \
      org.opencontainers.image.licenses="Apache-2.0"

RUN groupadd --system --gid 10001 neardup \
 && useradd --system --uid 10001 --gid neardup --home-dir /home/neardup --create-home \
            --shell /usr/sbin/nologin neardup \
 && mkdir -p /var/cache/neardup/numba \
 && chown -R neardup:neardup /var/cache/neardup

COPY --from=build /opt/neardup /opt/neardup

# NEARDUP_CACHE_DIR holds the normalisation and weight tables, NUMBA_CACHE_DIR the compiled
# kernels: both must be writable by the (non-root) user; mount a volume there to keep them.
# NUMBA_CPU_NAME=generic: the kernels compiled into the image below run on any x86-64 host, not
# only on a CPU like the build machine's (numba would otherwise recompile, or crash on a CPU
# without the build host's instructions).
# NEARDUP_WEB_BIND=0.0.0.0: in a container the web and metrics ports must answer on the
# container's address (the worker's own default is loopback).
ENV PATH=/opt/neardup/bin:${PATH} \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    NEARDUP_CACHE_DIR=/var/cache/neardup \
    NUMBA_CACHE_DIR=/var/cache/neardup/numba \
    NUMBA_CPU_NAME=generic \
    NEARDUP_WEB_BIND=0.0.0.0 \
    NEARDUP_WEB_PORT=6066 \
    NEARDUP_METRICS_PORT=9100

# numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd
USER 10001:10001
WORKDIR /home/neardup

# smoke test, and it fills the caches above so a worker starts without compiling its kernels
RUN neardup warmup

EXPOSE 6066 9100

# liveness of the worker's web server (NEARDUP_WEB_PORT, 6066)
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:6066/health', timeout=4)"]

ENTRYPOINT ["neardup"]
CMD ["worker"]
