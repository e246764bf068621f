// cdpSimpleQuicksort-style recursive quicksort with dynamic parallelism
// (one thread per grid; each partition launches its halves into streams of
// their own; short ranges and deep levels use selection sort).
//   nvcc -ptx -rdc=true -arch=sm_90 -O3 cdp_quicksort.cu -o cdp_quicksort.sm90.rdc.ptx
#define MAX_DEPTH 16
#define SELECTION_SORT 8

__device__ void selection_sort(unsigned *data, int left, int right) {
    for (int i = left; i <= right; ++i) {
        unsigned min_val = data[i];
        int min_idx = i;
        for (int j = i + 1; j <= right; ++j) {
            unsigned v = data[j];
            if (v < min_val) {
                min_idx = j;
                min_val = v;
            }
        }
        if (i != min_idx) {
            data[min_idx] = data[i];
            data[i] = min_val;
        }
    }
}

__global__ void cdp_quicksort(unsigned *data, int left, int right, int depth) {
    if (depth >= MAX_DEPTH || right - left <= SELECTION_SORT) {
        selection_sort(data, left, right);
        return;
    }
    unsigned *lptr = data + left;
    unsigned *rptr = data + right;
    unsigned pivot = data[(left + right) / 2];
    while (lptr <= rptr) {
        unsigned lval = *lptr;
        unsigned rval = *rptr;
        while (lval < pivot) {
            lptr++;
            lval = *lptr;
        }
        while (rval > pivot) {
            rptr--;
            rval = *rptr;
        }
        if (lptr <= rptr) {
            *lptr++ = rval;
            *rptr-- = lval;
        }
    }
    int nright = rptr - data;
    int nleft = lptr - data;
    if (left < nright) {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        cdp_quicksort<<<1, 1, 0, s>>>(data, left, nright, depth + 1);
        cudaStreamDestroy(s);
    }
    if (nleft < right) {
        cudaStream_t s1;
        cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
        cdp_quicksort<<<1, 1, 0, s1>>>(data, nleft, right, depth + 1);
        cudaStreamDestroy(s1);
    }
}
