"""print() in a kernel: the output appears at the next synchronisation."""
from numba import cuda


@cuda.jit
def hello():
    if cuda.threadIdx.x < 2:
        print("hello from thread", cuda.threadIdx.x)


def main():
    print("before", flush=True)
    hello[1, 32]()
    cuda.synchronize()
    print("OK printf", flush=True)


if __name__ == "__main__":
    main()
