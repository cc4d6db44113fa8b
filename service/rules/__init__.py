"""The decision rule: the hybrid policy, adaptive thresholds and every veto."""
