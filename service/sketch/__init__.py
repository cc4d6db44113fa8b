"""Sketches: fingerprints over the kernels, index maths, similarity, the hot tier and the window."""
