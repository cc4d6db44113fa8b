"""Numba kernels. This package imports only numpy and numba; each kernel has a slow reference
in tests/unit/test_kernels.py and is reached through the typed wrappers in service/sketch/fingerprint.py.

Importing the package points numba at the shared cache folder (:mod:`neardup.kernels.cache`)
before any kernel module is loaded."""

from neardup.kernels.cache import use_kernel_cache

use_kernel_cache()
