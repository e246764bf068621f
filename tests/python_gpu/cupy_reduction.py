"""CuPy ReductionKernel (an L2 norm per row) and cupy.sum over an axis."""
import cupy as cp
import numpy as np

l2norm = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


def main():
    x = np.arange(2000, dtype=np.float32).reshape(4, 500) / 100
    norms = l2norm(cp.asarray(x), axis=1).get()
    np.testing.assert_allclose(norms, np.sqrt((x * x).sum(axis=1)), rtol=1e-5)
    n = np.arange(10000, dtype=np.int64)
    total = int(cp.asarray(n).sum())
    assert total == int(n.sum()), total
    print("OK reduction", total)


if __name__ == "__main__":
    main()
