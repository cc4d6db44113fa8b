"""Deployment files stay consistent with the code: they parse, name only metrics that
service/metrics.py defines (with their labels), set only settings that config/settings.py knows,
scrape each worker once per setup, carry credentials only from Secrets, pin their images, and CI
runs the Makefile's test target.

Nothing here starts a container: docker-compose.yml, deploy/k8s and the Dockerfile are checked as
text (tests/e2e/test_alerts.py runs the alert rules in a real Prometheus).

``python -m tests.unit.test_deploy_files`` rewrites deploy/k8s/prometheus-operator/prometheusrule.yaml
from deploy/prometheus/alerts.yml.
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
OPERATOR = K8S / "prometheus-operator"
PROMETHEUS_RULE = OPERATOR / "prometheusrule.yaml"
PYPROJECT = ROOT / "pyproject.toml"
# the target label every scrape path gives the workers, and the alerts select them by
WORKER_LABEL = ("app_kubernetes_io_name", "neardup")

# labels Prometheus or the histogram type add to every neardup series
SCRAPE_LABELS = {"instance", "job"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")

# the dashboard shows every collector of service/metrics.py (engine and agent) and these
# standard ones
STANDARD_ON_DASHBOARD = {"process_cpu_seconds_total", "process_resident_memory_bytes"}


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


def test_metrics_py_defines_the_agent_metrics() -> None:
    metrics = defined_metrics()
    agent = {m for m in metrics if m.startswith("neardup_agent_")}
    assert {"neardup_agent_ready", "neardup_agent_engine_retries_total", "neardup_agent_outputs_total"} <= agent


def test_dashboard_and_alerts_use_only_defined_metrics_and_labels() -> None:
    metrics = defined_metrics()
    problems = []
    for where, expr in [*dashboard_exprs(), *alert_exprs()]:
        problems += expr_problems(where, expr, metrics)
    assert not problems, "\n".join(problems)


def test_dashboard_covers_the_metrics() -> None:
    metrics = defined_metrics()
    shown = set()
    standard = set()
    for _, expr in dashboard_exprs():
        for name in re.findall(r"\b(?:neardup|process)_\w+", expr):
            found = resolve_metric(name, metrics)
            if found:
                shown.add(found[0])
            elif name.startswith("process_"):
                standard.add(name)
    assert shown == set(metrics), f"no panel for {sorted(set(metrics) - shown)}"
    assert standard >= STANDARD_ON_DASHBOARD, STANDARD_ON_DASHBOARD - standard


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
        "readiness": "neardup_agent_ready",
        "store retries": "neardup_agent_engine_retries_total",
        "produce retries": "neardup_agent_produce_retries_total",
        "worker down": "up{",
    }
    for what, metric in wanted.items():
        assert any(metric in str(r["expr"]) for r in alert_rules()), f"no alert on {what}"


def test_alerts_select_workers_by_label_not_by_job() -> None:
    """A job name differs per setup (compose, ServiceMonitor, annotation job): no rule names one."""
    name, value = WORKER_LABEL
    for r in alert_rules():
        assert not re.search(r"\bjob\s*=", str(r["expr"])), f"{r['alert']} selects a job"
    for r in alert_rules():
        if "up{" in str(r["expr"]):
            assert f'{name}="{value}"' in str(r["expr"]), r["alert"]


def prometheus_rule() -> dict[str, Any]:
    """The PrometheusRule for the operator: alerts.yml's groups, unchanged."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "neardup",
            "labels": {"app.kubernetes.io/name": "neardup", "app.kubernetes.io/component": "worker"},
        },
        "spec": {"groups": load_yaml(ALERTS)["groups"]},
    }


def write_prometheus_rule() -> None:
    header = (
        "# GENERATED from deploy/prometheus/alerts.yml by `python -m tests.unit.test_deploy_files`:\n"
        "# edit alerts.yml, then regenerate (tests/unit/test_deploy_files.py checks they are equal).\n"
    )
    body = yaml.safe_dump(prometheus_rule(), sort_keys=False, allow_unicode=True, width=100)
    PROMETHEUS_RULE.write_text(header + body, encoding="utf-8")


def test_prometheusrule_carries_the_alert_rules() -> None:
    assert load_yaml(PROMETHEUS_RULE) == prometheus_rule(), (
        "prometheusrule.yaml differs from alerts.yml: run `python -m tests.unit.test_deploy_files`"
    )


def test_prometheus_config() -> None:
    cfg = load_yaml(PROMETHEUS)
    name, value = WORKER_LABEL
    worker_labels = [sc.get("labels", {}) for j in cfg["scrape_configs"] if j["job_name"] == "neardup"
                     for sc in j["static_configs"]]  # fmt: skip
    assert worker_labels and all(lbl.get(name) == value for lbl in worker_labels)
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
    assert (DEPLOY / "redis" / "cluster-init.sh").exists()  # run by redis-init; tested in tests/integration
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
        assert s.archive_url is not None and s.archive_url.split("@")[1].split(":")[0] in services
        assert s.web_bind == "0.0.0.0", "in a container the worker must answer on the container's address"


def test_compose_publishes_no_worker_port_and_only_on_loopback() -> None:
    services = compose()["services"]
    for name, svc in services.items():
        if name.startswith("neardup-worker"):
            assert not svc.get("ports"), f"{name} publishes its web/metrics port to the host"
        for port in svc.get("ports") or []:
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every host address"


def test_compose_images_are_pinned() -> None:
    for name, svc in compose()["services"].items():
        image = svc.get("image")
        if image is None or image.startswith("neardup:"):  # built here
            continue
        tag = image.rsplit(":", 1)[-1] if ":" in image.split("/")[-1] else ""
        # PostgreSQL numbers its releases MAJOR.MINOR (15.15 is one exact release)
        release = r"\d+\.\d+" if image.startswith("postgres:") else r"v?\d+\.\d+\.\d+"
        assert "@sha256:" in image or re.fullmatch(release, tag), f"{name}: {image} is not pinned"


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
    assert pod["metadata"]["labels"]["app.kubernetes.io/name"] == WORKER_LABEL[1]
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
    assert s.web_bind == "0.0.0.0", "probes and Prometheus reach the pod's address, not its loopback"


def test_k8s_credentials_come_from_secrets() -> None:
    """Kafka SASL, Redis credentials and the /check token: secretKeyRef only, never the ConfigMap."""
    dep = k8s_one("Deployment")
    (c,) = [c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == "worker"]
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in c["env"] if "secretKeyRef" in e.get("valueFrom", {})}
    wanted = {"NEARDUP_KAFKA__SASL_USERNAME", "NEARDUP_KAFKA__SASL_PASSWORD", "NEARDUP_REDIS__USERNAME",
              "NEARDUP_REDIS__PASSWORD", "NEARDUP_CHECK_TOKEN", "NEARDUP_ARCHIVE_URL"}  # fmt: skip
    assert wanted <= set(refs), wanted - set(refs)
    examples = {(d["metadata"]["name"], k) for d in load_yaml_docs(K8S / "secret.example.yaml")
                for k in d["stringData"]}  # fmt: skip
    for env, ref in refs.items():
        assert (ref["name"], ref["key"]) in examples, f"{env}: secret.example.yaml has no {ref['name']}/{ref['key']}"
    cm = k8s_one("ConfigMap")["data"]
    assert not [k for k in cm if re.search(r"PASSWORD|TOKEN|USERNAME|SECRET", k)], "credentials in the ConfigMap"
    assert cm["NEARDUP_KAFKA__SECURITY_PROTOCOL"] in {"SASL_SSL", "SASL_PLAINTEXT"}
    assert cm["NEARDUP_KAFKA__SASL_MECHANISM"].startswith("SCRAM-")
    assert "secret.example.yaml" not in k8s_one("Kustomization")["resources"]


def test_k8s_image_is_the_release_version() -> None:
    import tomllib

    version = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    (image,) = k8s_one("Kustomization")["images"]
    assert image["newTag"] == version, f"image tag {image['newTag']!r}, release {version!r}"
    for pod in (k8s_one("Deployment")["spec"]["template"]["spec"], *(p for _, p in k8s_archive_pods())):
        for c in [*pod["containers"], *pod.get("initContainers", [])]:
            assert c["image"].split(":")[0] == image["name"], f"{c['name']}: {c['image']} escapes the images: entry"
            assert not c["image"].endswith(":latest")


# ------------------------------------------------------------------------------ kubernetes: the cold tier

ARCHIVE_ENV = "NEARDUP_ARCHIVE_URL"
EXAMPLES = K8S / "examples"


def k8s_archive_pods() -> list[tuple[str, dict[str, Any]]]:
    """(kind, pod spec) of the migration Job and the archiver CronJob."""
    job = k8s_one("Job", "neardup-archive-migrate")
    cron = k8s_one("CronJob", "neardup-archiver")
    return [("Job", job["spec"]["template"]["spec"]),
            ("CronJob", cron["spec"]["jobTemplate"]["spec"]["template"]["spec"])]  # fmt: skip


def _only_container(pod: dict[str, Any]) -> dict[str, Any]:
    (c,) = pod["containers"]
    return c


def _cli_params(args: list[str]) -> tuple[str, dict[str, Any]]:
    """Parse a container's args with the real ``neardup archive`` commands: (command, its options)."""
    from neardup.cli.archive import archive_group

    assert args[0] == "archive", args
    rest = args[1:]
    if rest and rest[0] in archive_group.commands:
        command = archive_group.commands[rest[0]]
        ctx = command.make_context(rest[0], rest[1:])
        return f"archive {rest[0]}", ctx.params
    ctx = archive_group.make_context("archive", rest)
    assert not ctx.args, f"unparsed arguments {ctx.args}"
    return "archive", ctx.params


def _secret_refs(c: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e["valueFrom"]["secretKeyRef"] for e in c.get("env", [])
            if "secretKeyRef" in e.get("valueFrom", {})}  # fmt: skip


def _pod_env(c: dict[str, Any], secret_values: dict[str, str]) -> dict[str, str]:
    """The container's NEARDUP_* environment: its ConfigMaps, plain values, and each Secret's value
    replaced by ``secret_values[NAME]``."""
    env: dict[str, str] = {}
    for src in c.get("envFrom", []):
        env |= {k: str(v) for k, v in k8s_one("ConfigMap", src["configMapRef"]["name"])["data"].items()}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = str(e["value"])
        elif "secretKeyRef" in e.get("valueFrom", {}):
            env[e["name"]] = secret_values[e["name"]]
    return env


SECRET_VALUES = {
    ARCHIVE_ENV: "postgresql://neardup:s3cret@db.example:5432/neardup?sslmode=verify-full",
    "NEARDUP_REDIS__USERNAME": "neardup",
    "NEARDUP_REDIS__PASSWORD": "redis-s3cret",
    "NEARDUP_KAFKA__SASL_USERNAME": "neardup",
    "NEARDUP_KAFKA__SASL_PASSWORD": "kafka-s3cret",
    "NEARDUP_CHECK_TOKEN": "t0ken",
}


def test_k8s_migration_job_runs_archive_migrate(monkeypatch: pytest.MonkeyPatch) -> None:
    job = k8s_one("Job", "neardup-archive-migrate")
    pod = job["spec"]["template"]["spec"]
    c = _only_container(pod)
    command, _ = _cli_params(c["args"])
    assert command == "archive migrate"
    assert pod["restartPolicy"] in {"OnFailure", "Never"} and job["spec"]["backoffLimit"] >= 1
    # a finished Job is removed, so the next release's apply can create it again (its template is immutable)
    assert job["spec"]["ttlSecondsAfterFinished"] > 0
    env = _pod_env(c, SECRET_VALUES)
    assert not [p for k in env if (p := settings_key_problem(k))]
    assert settings_from_env(env, monkeypatch).archive_url == SECRET_VALUES[ARCHIVE_ENV]
    assert "archive-migrate-job.yaml" in k8s_one("Kustomization")["resources"]


def test_k8s_archiver_cronjob_moves_documents_past_the_horizon(monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup.cli.archive import parse_duration

    cron = k8s_one("CronJob", "neardup-archiver")
    spec = cron["spec"]
    assert len(spec["schedule"].split()) == 5, spec["schedule"]
    assert spec["concurrencyPolicy"] == "Forbid", "two archivers would copy the same pages"
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    c = _only_container(pod)
    command, params = _cli_params(c["args"])
    assert command == "archive" and params["every"] is None, "a CronJob run ends: no --every"
    assert parse_duration(params["older_than"]) >= 86_400
    assert "archiver-cronjob.yaml" in k8s_one("Kustomization")["resources"]

    # every variable it sets is a setting, and they load into the store and cold tier it needs
    env = _pod_env(c, SECRET_VALUES)
    assert not [p for k in env if (p := settings_key_problem(k))]
    s = settings_from_env(env, monkeypatch)
    assert s.archive_url == SECRET_VALUES[ARCHIVE_ENV]
    worker = _only_container(k8s_one("Deployment")["spec"]["template"]["spec"])
    assert s.store_url.startswith("rediscluster://") and s.redis.password is not None
    # the same store as the workers': the same ConfigMap
    assert c["envFrom"] == worker["envFrom"]
    # the files the settings name are mounted (the Redis CA)
    mounts = [m["mountPath"] for m in c["volumeMounts"]]
    assert s.redis.tls_ca_file and any(s.redis.tls_ca_file.startswith(m + "/") for m in mounts)
    assert pod["securityContext"]["runAsNonRoot"] and c["securityContext"]["readOnlyRootFilesystem"]


def test_k8s_cold_tier_url_comes_from_a_secret_and_is_never_printed() -> None:
    """Every pod that reads NEARDUP_ARCHIVE_URL gets it from the neardup-archive Secret, not
    optional (a worker without the cold tier would miss what the archiver moved); no manifest
    writes a PostgreSQL password or expands the variable into a command line."""
    worker = _only_container(k8s_one("Deployment")["spec"]["template"]["spec"])
    containers = [worker, *(_only_container(p) for _, p in k8s_archive_pods())]
    examples = {(d["metadata"]["name"], k) for d in load_yaml_docs(K8S / "secret.example.yaml")
                for k in d["stringData"]}  # fmt: skip
    for c in containers:
        ref = _secret_refs(c)[ARCHIVE_ENV]
        assert (ref["name"], ref["key"]) == ("neardup-archive", "url") and not ref.get("optional")
        assert (ref["name"], ref["key"]) in examples
        assert not [a for a in [*c.get("args", []), *c.get("command", [])] if ARCHIVE_ENV in a or "postgresql://" in a]
    assert ARCHIVE_ENV not in k8s_one("ConfigMap")["data"]
    for d in k8s_docs():
        if d["kind"] != "Secret":
            assert not re.search(r"postgres(ql)?://[^:/@\s]+:[^@\s]+@", json.dumps(d)), d["__file__"]


def test_k8s_cold_tier_url_is_redacted_when_settings_are_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    (example,) = [d for d in load_yaml_docs(K8S / "secret.example.yaml") if d["metadata"]["name"] == "neardup-archive"]
    url = example["stringData"]["url"]
    s = settings_from_env({ARCHIVE_ENV: url}, monkeypatch)
    assert s.archive_url == url
    password = url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    assert password not in json.dumps(s.redacted())


def test_k8s_postgres_example_is_marked_and_not_applied() -> None:
    """The in-cluster PostgreSQL is an example: marked as one, in no kustomization, pinned, its
    password from a Secret; the managed-database setting is documented beside the Secret."""
    path = EXAMPLES / "postgres-statefulset.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# EXAMPLE ONLY, NOT FOR PRODUCTION")
    assert "managed" in text.lower()
    docs = load_yaml_docs(path)
    assert {d["kind"] for d in docs} == {"Service", "StatefulSet"}
    (sts,) = [d for d in docs if d["kind"] == "StatefulSet"]
    (c,) = sts["spec"]["template"]["spec"]["containers"]
    assert re.fullmatch(r"postgres:\d+\.\d+", c["image"]), c["image"]
    env = {e["name"]: e for e in c["env"]}
    assert "secretKeyRef" in env["POSTGRES_PASSWORD"]["valueFrom"]
    assert "scram-sha-256" in env["POSTGRES_INITDB_ARGS"]["value"]
    (svc,) = [d for d in docs if d["kind"] == "Service"]
    assert sts["spec"]["serviceName"] == svc["metadata"]["name"]
    # the example URL in secret.example.yaml names this StatefulSet's first pod
    (example,) = [d for d in load_yaml_docs(K8S / "secret.example.yaml") if d["metadata"]["name"] == "neardup-archive"]
    assert f"@{sts['metadata']['name']}-0.{svc['metadata']['name']}." in example["stringData"]["url"]
    secret_text = (K8S / "secret.example.yaml").read_text(encoding="utf-8")
    assert "sslmode=verify-full" in secret_text, "the managed database's URL verifies TLS"
    for kust in K8S.rglob("kustomization.yaml"):
        resources = load_yaml(kust).get("resources", [])
        assert not [r for r in resources if "examples" in r or "postgres" in r], kust


def test_k8s_archive_pods_are_not_scraped_or_selected_as_workers() -> None:
    """Their pods are not workers: neither the worker Service, the PDB nor Prometheus' pod job selects them."""
    svc = k8s_one("Service")
    pdb = k8s_one("PodDisruptionBudget")
    cron = k8s_one("CronJob", "neardup-archiver")
    job = k8s_one("Job", "neardup-archive-migrate")
    for tmpl in (job["spec"]["template"], cron["spec"]["jobTemplate"]["spec"]["template"]):
        labels = tmpl["metadata"]["labels"]
        assert not labels.items() >= svc["spec"]["selector"].items()
        assert not labels.items() >= pdb["spec"]["selector"]["matchLabels"].items()
        assert labels.get("app.kubernetes.io/name") != WORKER_LABEL[1]
        assert not (tmpl["metadata"].get("annotations") or {}).get("prometheus.io/scrape")


def _json_patch_remove(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """Apply JSON-patch ``remove`` operations (all the operator overlay uses); a missing path fails."""
    import copy

    out = copy.deepcopy(doc)
    for op in ops:
        assert op["op"] == "remove", op
        keys = [k.replace("~1", "/").replace("~0", "~") for k in op["path"].strip("/").split("/")]
        node = out
        for k in keys[:-1]:
            node = node[k]
        del node[keys[-1]]
    return out


def _scrape_paths(deployment: dict[str, Any], service: dict[str, Any], monitors: list[dict[str, Any]]) -> list[str]:
    """How a worker pod gets scraped: by its annotations, its Service's annotations, a ServiceMonitor."""
    paths = []
    if deployment["spec"]["template"]["metadata"].get("annotations", {}).get("prometheus.io/scrape") == "true":
        paths.append("pod annotations")
    if (service["metadata"].get("annotations") or {}).get("prometheus.io/scrape") == "true":
        paths.append("service annotations")
    for m in monitors:
        if service["metadata"]["labels"].items() >= m["spec"]["selector"]["matchLabels"].items():
            paths.append(f"ServiceMonitor {m['metadata']['name']}")
    return paths


def test_k8s_one_scrape_path_each() -> None:
    dep, svc = k8s_one("Deployment"), k8s_one("Service")
    assert _scrape_paths(dep, svc, []) == ["pod annotations"]

    kust = load_yaml(OPERATOR / "kustomization.yaml")
    assert kust["resources"][0] == ".."
    docs = [d for res in kust["resources"][1:] for d in load_yaml_docs(OPERATOR / res)]
    monitors = [d for d in docs if d["kind"] == "ServiceMonitor"]
    (patch,) = kust["patches"]
    assert patch["target"] == {"kind": "Deployment", "name": dep["metadata"]["name"]}
    patched = _json_patch_remove(dep, yaml.safe_load(patch["patch"]))
    assert _scrape_paths(patched, svc, monitors) == ["ServiceMonitor neardup-worker"]
    assert not [a for a in patched["spec"]["template"]["metadata"].get("annotations", {}) if "prometheus.io" in a]

    (monitor,) = monitors
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in svc["spec"]["ports"]}
    assert {p["name"]: p["port"] for p in svc["spec"]["ports"]}[endpoint["port"]] == 9100
    # the alerts' worker label comes from the pod label app.kubernetes.io/name
    assert "app.kubernetes.io/name" in monitor["spec"]["podTargetLabels"]
    assert {d["kind"] for d in docs} == {"ServiceMonitor", "PrometheusRule"}


def test_plain_kubernetes_scrape_config_labels_the_workers() -> None:
    cfg = load_yaml(DEPLOY / "prometheus" / "kubernetes.yml")
    (job,) = cfg["scrape_configs"]
    relabel = job["relabel_configs"]
    assert {"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"], "regex": "neardup",
            "action": "keep"} in relabel  # fmt: skip
    assert {"action": "labelmap", "regex": "__meta_kubernetes_pod_label_(.+)"} in relabel
    assert cfg["rule_files"] == ["alerts.yml"]


def test_k8s_metrics_service_selects_the_workers() -> None:
    svc = k8s_one("Service")
    pod_labels = k8s_one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert pod_labels.items() >= svc["spec"]["selector"].items()
    assert 9100 in {p["port"] for p in svc["spec"]["ports"]}


# ------------------------------------------------------------------------------------- Dockerfile and CI


def test_dockerfile() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    # the base by exact version (3.11.N) or digest, never a moving tag such as 3.11-slim
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)", text, re.M)
    assert base and re.fullmatch(r"python:3\.11\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?|python@sha256:[0-9a-f]{64}",
                                 base.group(1)), base  # fmt: skip
    assert 'ENTRYPOINT ["neardup"]' in text
    assert 'CMD ["worker"]' in text
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users and re.fullmatch(r"[1-9]\d*:[1-9]\d*", users[-1]), f"USER {users[-1:]} must be numeric uid:gid"
    dep_ctx = k8s_one("Deployment")["spec"]["template"]["spec"]["securityContext"]
    assert users[-1] == f"{dep_ctx['runAsUser']}:{dep_ctx['runAsGroup']}"
    assert "requirements.lock" in text and "NUMBA_CACHE_DIR" in text
    assert re.search(r"^\s*NUMBA_CPU_NAME=generic\b", text, re.M), "cached kernels must not be tied to the build CPU"
    assert re.search(r"^\s*NEARDUP_WEB_BIND=0\.0\.0\.0\b", text, re.M)
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


if __name__ == "__main__":
    write_prometheus_rule()
    print(f"wrote {PROMETHEUS_RULE.relative_to(ROOT)}")
