"""CuPy streams and events: work on a created stream, events around it, elapsed time."""
import cupy as cp
import numpy as np


def main():
    x = np.arange(4096, dtype=np.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    with stream:
        start.record()
        d = cp.asarray(x)
        y = d * 3 + 1
        end.record()
    end.synchronize()
    ms = cp.cuda.get_elapsed_time(start, end)
    stream.synchronize()
    np.testing.assert_array_equal(y.get(), x * 3 + 1)
    assert ms >= 0, ms
    assert stream.done
    print("OK streams", ms >= 0)


if __name__ == "__main__":
    main()
