"""Deployment files stay consistent with the code: they parse, name only metrics that
service/metrics.py defines (with their labels), set only settings that config/settings.py knows,
and CI runs the Makefile's test target.

Nothing here starts a container: docker-compose.yml, deploy/k8s and the Dockerfile are checked as text.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from neardup.config import Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = ROOT / "docker-compose.yml"
METRICS_PY = ROOT / "service" / "metrics.py"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "neardup.json"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
PROMETHEUS = DEPLOY / "prometheus" / "prometheus.yml"
K8S = DEPLOY / "k8s"

# labels Prometheus or the histogram type add to every neardup series
SCRAPE_LABELS = {"instance", "job"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")

# the metrics the dashboard is meant to show
DASHBOARD_METRICS = {
    "neardup_documents_total", "neardup_dead_letter_total", "neardup_rejected_total",
    "neardup_decision_latency_seconds", "neardup_window_documents", "neardup_windows_closed_total",
    "neardup_window_processing_seconds", "neardup_candidates_per_document",
    "neardup_recheck_rejections_total", "neardup_store_round_trip_seconds", "neardup_store_errors_total",
    "neardup_threshold", "neardup_threshold_updates_total", "neardup_bloom_fill_ratio",
    "neardup_race_resolutions_total", "neardup_replayed_decisions_total", "neardup_consumer_lag_messages",
}  # fmt: skip


# --------------------------------------------------------------------------------------------- helpers


def yaml_files() -> list[Path]:
    return sorted([*DEPLOY.rglob("*.yml"), *DEPLOY.rglob("*.yaml"), COMPOSE])


def load_yaml_docs(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def load_yaml(path: Path) -> Any:
    docs = load_yaml_docs(path)
    assert len(docs) == 1, f"{path}: expected one YAML document"
    return docs[0]


def defined_metrics() -> dict[str, tuple[str, set[str]]]:
    """name -> (type, label names), read from service/metrics.py as text."""
    text = METRICS_PY.read_text(encoding="utf-8")
    out: dict[str, tuple[str, set[str]]] = {}
    for m in re.finditer(r"\b(Counter|Gauge|Histogram|Summary)\(\s*\"(\w+)\"(.*?)registry\s*=", text, re.S):
        kind, name, rest = m.groups()
        labels_list = re.search(r"\[([^\]]*)\]", rest)
        labels = set(re.findall(r"\"(\w+)\"", labels_list.group(1))) if labels_list else set()
        out[name] = (kind, labels)
    assert out, f"no collectors found in {METRICS_PY}"
    return out


def resolve_metric(used: str, metrics: dict[str, tuple[str, set[str]]]) -> tuple[str, set[str]] | None:
    """The collector behind a series name (histogram suffixes, the counter's _total); None if unknown."""
    if used in metrics:
        return used, metrics[used][1]
    for suffix in HISTOGRAM_SUFFIXES:
        base = used.removesuffix(suffix)
        if base != used and metrics.get(base, ("", set()))[0] in {"Histogram", "Summary"}:
            extra = {"le"} if suffix == "_bucket" and metrics[base][0] == "Histogram" else set()
            return base, metrics[base][1] | extra
    base = used.removesuffix("_total")
    if base != used and metrics.get(base, ("", set()))[0] == "Counter":
        return base, metrics[base][1]
    return None


def dashboard_exprs() -> list[tuple[str, str]]:
    board = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    out = []
    for panel in board["panels"]:
        for t in panel.get("targets", []):
            out.append((f"panel {panel['title']!r}", t["expr"]))
    return out


def alert_rules() -> list[dict[str, Any]]:
    doc = load_yaml(ALERTS)
    return [r for g in doc["groups"] for r in g["rules"]]


def alert_exprs() -> list[tuple[str, str]]:
    return [(f"alert {r.get('alert') or r.get('record')}", str(r["expr"])) for r in alert_rules()]


def expr_problems(where: str, expr: str, metrics: dict[str, tuple[str, set[str]]]) -> list[str]:
    problems = []
    used_labels: set[str] = set()
    allowed = set(SCRAPE_LABELS)
    for m in re.finditer(r"\b(neardup_\w+)(\{[^}]*\})?", expr):
        name, selector = m.group(1), m.group(2) or ""
        found = resolve_metric(name, metrics)
        if found is None:
            problems.append(f"{where}: {name} is not defined in service/metrics.py")
            continue
        allowed |= found[1]
        used_labels |= set(re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", selector))
    for m in re.finditer(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        used_labels |= {x.strip() for x in m.group(1).split(",") if x.strip()}
    problems += [
        f"{where}: label {lbl!r} is not a label of the metrics in {expr!r}" for lbl in sorted(used_labels - allowed)
    ]
    return problems


def env_read_directly() -> set[str]:
    """NEARDUP_* variables the code reads itself (not Settings fields), e.g. NEARDUP_CACHE_DIR."""
    names: set[str] = set()
    for pkg in ("service", "agents", "storage", "config"):
        for path in (ROOT / pkg).rglob("*.py"):
            names |= set(re.findall(r"[\"'](NEARDUP_[A-Z0-9_]+)[\"']", path.read_text(encoding="utf-8")))
    return names


def settings_key_problem(key: str) -> str | None:
    """Does NEARDUP_A__B name a field of config.Settings (or a variable the code reads itself)?"""
    if not key.startswith("NEARDUP_") or key in env_read_directly():
        return None
    model: type[BaseModel] | None = Settings
    for part in key.removeprefix("NEARDUP_").lower().split("__"):
        if model is None:  # below a dict field: any key
            return None
        field = model.model_fields.get(part)
        if field is None:
            return f"{key}: config.Settings has no field {part!r} here"
        ann = field.annotation
        model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
    return None


def interpolate_defaults(value: str) -> str:
    """docker compose's ${VAR:-default} with VAR unset."""
    return re.sub(r"\$\{\w+(?::?-([^}]*))?\}", lambda m: m.group(1) or "", value)


def settings_from_env(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    import os

    for k in list(os.environ):
        if k.startswith("NEARDUP_"):
            monkeypatch.delenv(k)
    for k, v in env.items():
        if k.startswith("NEARDUP_"):
            monkeypatch.setenv(k, v)
    return load_settings()


def compose() -> dict[str, Any]:
    doc = load_yaml(COMPOSE)
    assert isinstance(doc, dict)
    return doc


def compose_env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): interpolate_defaults(str(v)) for k, v in env.items()}


def k8s_docs() -> list[dict[str, Any]]:
    docs = []
    for path in sorted([*K8S.glob("*.yaml"), *K8S.glob("*.yml")]):
        for d in load_yaml_docs(path):
            d["__file__"] = path.name
            docs.append(d)
    return docs


def k8s_one(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in k8s_docs() if d.get("kind") == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''} in deploy/k8s, found {len(found)}"
    return found[0]


# ---------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_yaml_parses(path: Path) -> None:
    assert load_yaml_docs(path), f"{path} is empty"


@pytest.mark.parametrize("path", sorted(DEPLOY.rglob("*.json")), ids=lambda p: str(p.relative_to(ROOT)))
def test_json_parses(path: Path) -> None:
    assert json.loads(path.read_text(encoding="utf-8"))


def test_deploy_holds_no_python() -> None:
    assert not list(DEPLOY.rglob("*.py"))


# ---------------------------------------------------------------------------------------------- metrics


def test_metrics_py_defines_what_the_dashboard_is_about() -> None:
    metrics = defined_metrics()
    assert set(metrics) >= DASHBOARD_METRICS, DASHBOARD_METRICS - set(metrics)


def test_dashboard_and_alerts_use_only_defined_metrics_and_labels() -> None:
    metrics = defined_metrics()
    problems = []
    for where, expr in [*dashboard_exprs(), *alert_exprs()]:
        problems += expr_problems(where, expr, metrics)
    assert not problems, "\n".join(problems)


def test_dashboard_covers_the_metrics() -> None:
    metrics = defined_metrics()
    shown = set()
    for _, expr in dashboard_exprs():
        for name in re.findall(r"\bneardup_\w+", expr):
            found = resolve_metric(name, metrics)
            if found:
                shown.add(found[0])
    assert shown >= DASHBOARD_METRICS, f"no panel for {sorted(DASHBOARD_METRICS - shown)}"


def test_dashboard_structure() -> None:
    board = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    ds = load_yaml(DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml")
    uids = {d["uid"] for d in ds["datasources"]}
    for p in board["panels"]:
        assert "gridPos" in p
        if p["type"] == "row":
            continue
        assert p["targets"], f"panel {p['title']!r} has no query"
        for t in [p, *p["targets"]]:
            assert t["datasource"]["uid"] in uids, f"panel {p['title']!r}: unknown datasource"


def test_alerts_are_complete() -> None:
    names = set()
    for r in alert_rules():
        assert r["alert"] not in names, f"duplicate alert {r['alert']}"
        names.add(r["alert"])
        assert r["expr"] and r["labels"]["severity"] in {"info", "warning", "critical"}
        assert r["annotations"]["summary"], r["alert"]
    wanted = {
        "dead letter": "neardup_dead_letter_total",
        "latency": "neardup_decision_latency_seconds",
        "store errors": "neardup_store_errors_total",
        "consumer lag": "neardup_consumer_lag_messages",
    }
    for what, metric in wanted.items():
        assert any(metric in str(r["expr"]) for r in alert_rules()), f"no alert on {what}"


def test_prometheus_config() -> None:
    cfg = load_yaml(PROMETHEUS)
    for rf in cfg["rule_files"]:
        assert (PROMETHEUS.parent / rf).exists(), f"rule file {rf} missing"
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    services = compose()["services"]
    targets = [t for sc in jobs["neardup"]["static_configs"] for t in sc["targets"]]
    assert targets
    for t in targets:
        host, port = t.rsplit(":", 1)
        assert host in services, f"scrape target {t}: no compose service {host}"
        assert compose_env(services[host]).get("NEARDUP_METRICS_PORT") == port, t


# ---------------------------------------------------------------------------------------------- compose


def test_compose_services_and_mounts() -> None:
    doc = compose()
    services = doc["services"]
    for name, svc in services.items():
        deps = svc.get("depends_on") or []
        for dep in deps if isinstance(deps, list) else deps.keys():
            assert dep in services, f"{name} depends on unknown service {dep}"
        for vol in svc.get("volumes") or []:
            src = str(vol).split(":", 1)[0]
            if src.startswith("./deploy"):
                assert (ROOT / src).exists(), f"{name}: mount source {src} missing"
            elif not src.startswith((".", "/")):
                assert src in (doc.get("volumes") or {}), f"{name}: named volume {src} not declared"
    assert sum(1 for s in services if re.fullmatch(r"redis-\d", s)) == 6
    assert any("--cluster create" in json.dumps(s.get("command")) for s in services.values())
    assert any(str(s.get("image", "")).startswith("apache/kafka") for s in services.values())
    workers = [s for n, s in services.items() if n.startswith("neardup-worker")]
    assert len(workers) == 2
    grafana = services["grafana"]
    mounts = {str(v).split(":")[1] for v in grafana["volumes"]}
    provider = load_yaml(DEPLOY / "grafana" / "provisioning" / "dashboards" / "neardup.yml")
    assert provider["providers"][0]["options"]["path"] in mounts


def test_compose_worker_settings_are_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    services = compose()["services"]
    for name in ("neardup-worker-1", "neardup-worker-2"):
        env = compose_env(services[name])
        problems = [p for k in env if (p := settings_key_problem(k))]
        assert not problems, problems
        s = settings_from_env(env, monkeypatch)
        assert s.broker_url == "kafka://kafka:9092"
        assert s.store_url.startswith("rediscluster://")
        hosts = s.store_url.removeprefix("rediscluster://").split(",")
        for h in hosts:
            assert h.split(":")[0] in services, f"{name}: store host {h} is no compose service"
        assert s.redis.password is not None


# ------------------------------------------------------------------------------------------- kubernetes


def test_k8s_manifests_are_well_formed() -> None:
    docs = k8s_docs()
    assert docs
    for d in docs:
        assert d.get("apiVersion") and d.get("kind"), d["__file__"]
        if d["kind"] != "Kustomization":
            assert d["metadata"]["name"], d["__file__"]
    kust = k8s_one("Kustomization")
    for res in kust["resources"]:
        assert (K8S / res).exists(), f"kustomization: {res} missing"


def _port(container: dict[str, Any], port: int | str) -> int:
    if isinstance(port, int):
        return port
    return next(p["containerPort"] for p in container["ports"] if p["name"] == port)


def test_k8s_worker_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    dep = k8s_one("Deployment")
    pod = dep["spec"]["template"]
    assert pod["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == "9100"
    (c,) = [c for c in pod["spec"]["containers"] if c["name"] == "worker"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/health"
    assert c["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert _port(c, c["livenessProbe"]["httpGet"]["port"]) == 6066
    assert _port(c, c["readinessProbe"]["httpGet"]["port"]) == 6066
    assert 9100 in {p["containerPort"] for p in c["ports"]}
    refs = {
        e["name"]: e["valueFrom"]["secretKeyRef"] for e in c.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})
    }
    assert "NEARDUP_REDIS__PASSWORD" in refs, "the Redis password must come from a Secret"
    cm_names = {src["configMapRef"]["name"] for src in c.get("envFrom", []) if "configMapRef" in src}
    cm = k8s_one("ConfigMap")
    assert cm["metadata"]["name"] in cm_names
    assert pod["metadata"]["labels"].items() >= dep["spec"]["selector"]["matchLabels"].items()

    # the ConfigMap's settings are real settings, and load
    env = {k: str(v) for k, v in cm["data"].items()}
    problems = [p for k in env if (p := settings_key_problem(k))]
    problems += [p for e in c.get("env", []) if (p := settings_key_problem(e["name"]))]
    assert not problems, problems
    s = settings_from_env(env, monkeypatch)
    assert (s.web_port, s.metrics_port) == (6066, 9100)


def test_k8s_metrics_service_selects_the_workers() -> None:
    svc = k8s_one("Service")
    pod_labels = k8s_one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert pod_labels.items() >= svc["spec"]["selector"].items()
    assert 9100 in {p["port"] for p in svc["spec"]["ports"]}


# ------------------------------------------------------------------------------------- Dockerfile and CI


def test_dockerfile() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11-slim|^ARG PYTHON_IMAGE=python:3\.11-slim", text, re.M)
    assert 'ENTRYPOINT ["neardup"]' in text
    assert 'CMD ["worker"]' in text
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    assert "requirements.lock" in text and "NUMBA_CACHE_DIR" in text
    assert "http://127.0.0.1:6066/health" in text


def _make_targets(makefile: str) -> dict[str, str]:
    """target -> its recipe (the tab-indented lines that follow the rule line)."""
    targets: dict[str, str] = {}
    name: str | None = None
    for line in makefile.splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", line)
        if m:
            name = m.group(1)
            targets[name] = ""
        elif name is not None and line.startswith("\t"):
            targets[name] += line[1:] + "\n"
        elif line.strip() and not line.startswith(("#", "ifdef", "ifeq", "else", "endif")):
            name = None
    return targets


def test_ci_runs_the_makefile_test_target() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^set -euo pipefail$", ci, re.M)
    make_calls = [shlex.split(line) for line in ci.splitlines() if re.match(r"\s*make\b", line)]
    assert make_calls == [["make", "test"]], make_calls
    assert "|| true" not in ci and "|| :" not in ci, "CI must not hide a failing make"
    targets = _make_targets((ROOT / "Makefile").read_text(encoding="utf-8"))
    assert "test" in targets
    assert re.search(r"-m pytest\b", targets["test"]), targets["test"]
