"""Numba kernels. This package imports only numpy and numba; each kernel has a slow reference
in tests/unit/test_kernels.py and is reached through the typed wrappers in service/sketch/fingerprint.py."""
