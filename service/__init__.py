"""neardup's domain: normalisation, fingerprints, the decision policy and the engine."""
