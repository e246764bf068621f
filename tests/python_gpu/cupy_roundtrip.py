"""CuPy device arrays: host -> device -> host, device copies, memset, strided views."""
import cupy as cp
import numpy as np


def main():
    a = np.random.default_rng(1).standard_normal((64, 33)).astype(np.float64)
    d = cp.asarray(a)
    np.testing.assert_array_equal(d.get(), a)
    e = d.copy()                                   # device to device
    np.testing.assert_array_equal(cp.asnumpy(e), a)
    t = cp.ascontiguousarray(d.T)                  # a strided view made contiguous on the device
    np.testing.assert_array_equal(t.get(), a.T)
    z = cp.zeros((5, 7), dtype=cp.int32)           # memset
    z[1:3, 2:5] = 9
    expect = np.zeros((5, 7), dtype=np.int32)
    expect[1:3, 2:5] = 9
    np.testing.assert_array_equal(z.get(), expect)
    host = np.empty_like(a)
    d.get(out=host)
    np.testing.assert_array_equal(host, a)
    print("OK roundtrip", d.shape, float(d[3, 4]) == a[3, 4])


if __name__ == "__main__":
    main()
