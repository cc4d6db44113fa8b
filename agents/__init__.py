"""Kafka transport for neardup: Faust app, topics, the dedup agent, web views and CLI glue.

Transport only: decode, window, call the engine (``service``), produce, commit. Imports flow
``agents -> service`` and never back. Nothing here connects at import time.
"""
