"""Comparing arrays the same way with numpy (dtype and values, NaN equal to
NaN) and without it (lists)."""

import math

import launchpad_client as lp

if lp.have_numpy():
    import numpy as np
else:
    np = None

FORMATS = ["cbor", "json"] if lp.have_cbor() else ["json"]


def same_number(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


def check_array(test, got, expected, dtype):
    """`got` must be a numpy array of `dtype` equal to `expected` (a list or
    array) with numpy, the list `expected` without."""
    if np is not None:
        test.assertIsInstance(got, np.ndarray)
        test.assertEqual(got.dtype, np.dtype(dtype))
        expected = np.asarray(expected, dtype=dtype)
        test.assertEqual(got.shape, expected.shape)
        test.assertTrue(np.array_equal(got, expected, equal_nan=got.dtype.kind == "f"),
                        f"{got!r} != {expected!r}")
    else:
        test.assertIsInstance(got, list)
        expected = list(expected)
        test.assertEqual(len(got), len(expected))
        for a, b in zip(got, expected):
            test.assertTrue(same_number(a, b) or (isinstance(a, float) and a == b), f"{got} != {expected}")
