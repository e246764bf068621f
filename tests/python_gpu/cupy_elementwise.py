"""CuPy ElementwiseKernel with broadcasting, and a CuPy ufunc expression."""
import cupy as cp
import numpy as np

squared_diff = cp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                    "z = (x - y) * (x - y)", "squared_diff")


def main():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.array([0.5, 1, 2, 4], dtype=np.float32)
    z = squared_diff(cp.asarray(x), cp.asarray(y)).get()
    np.testing.assert_array_equal(z, (x - y) ** 2)
    w = (cp.sqrt(cp.asarray(x)) + 1).get()
    np.testing.assert_allclose(w, np.sqrt(x) + 1, rtol=1e-6)
    print("OK elementwise", z[1].tolist())


if __name__ == "__main__":
    main()
