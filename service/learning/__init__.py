"""The learning loop: feedback records, the learned model, the threshold search, evaluation, scoring."""
