"""The GPU models: what a device offers and what a kernel asks of it
(docs/gpus.md).

    devices           the GPUs ``ptxc run --gpu`` presents to an application
                      (cudaDeviceProp values, per-SM limits)
    architecture      the performance models' parameters per GPU, each with its source
    luo_suda_params   Luo & Suda's model parameters per GPU (Table 1 costs, a-d, m, t_mem, ...)
    occupancy         theoretical occupancy (the CUDA occupancy calculator)
    kernel_resources  a kernel's registers per thread and static shared memory
"""
