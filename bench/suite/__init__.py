"""Benchmarks of the paths users run: ``neardup bench fingerprint | pipeline | store | e2e``.

Each one writes a JSON file (by default ``bench/results/NAME-DATE.json``) with the versions, the
date and how busy the machine was, and prints a short table. Speed is measured here, never
asserted in tests. Modules: :mod:`neardup.bench.cli` (the commands), :mod:`~.corpus` (the
documents), :mod:`~.fingerprint`, :mod:`~.pipeline` (with :mod:`~.classic`, the classic stack),
:mod:`~.store`, :mod:`~.e2e`, and :mod:`~.report` / :mod:`~.profile` (JSON, tables, py-spy).
"""
