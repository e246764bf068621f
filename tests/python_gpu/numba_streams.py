"""Streams and events: async copies and a launch on a stream, timed by events."""
import numpy as np
from numba import cuda

N = 2048


@cuda.jit
def scale(x, k):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= k


def main():
    s1, s2 = cuda.stream(), cuda.stream()
    host = cuda.pinned_array(N, dtype=np.float32)
    host[:] = np.arange(N, dtype=np.float32)
    start, end = cuda.event(), cuda.event()
    start.record(s1)
    d = cuda.to_device(host, stream=s1)
    scale[8, 256, s1](d, 3.0)
    d.copy_to_host(host, stream=s1)
    end.record(s1)
    end.synchronize()
    s2.synchronize()
    ms = cuda.event_elapsed_time(start, end)
    assert ms >= 0.0, ms
    np.testing.assert_allclose(host, np.arange(N, dtype=np.float32) * 3)
    print("OK streams", ms >= 0.0)


if __name__ == "__main__":
    main()
