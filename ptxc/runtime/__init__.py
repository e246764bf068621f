"""Running unmodified CUDA applications on ptxc (``ptxc run -- ./app``).

A small native library (native/, built by ``pip install``) replaces
libcudart.so.13 in the application and talks to the ptxc process over a
socket; device memory is shared memory mapped in both processes at the
same addresses. docs/runtime.md describes the design.

* fatbin.py, lz4.py: the fat binary container and its compressed entries
* lineinfo.py: `--by source` checked before the run (.loc in the embedded PTX)
* protocol.py: the messages (mirrors native/protocol.h)
* devmem.py: the allocation table (one memfd segment per allocation)
* modules.py: registered fat binaries -> PTX modules, kernels, variables
* rdc.py: relocatable device code (-rdc=true): the objects' PTX linked as nvlink does
* ptxc/gpus/devices.py: the GPU models an application can be shown
* server.py: answering the shim's requests; launches
* report.py: the per-kernel summary and the SQLite report
* gpu_time.py: the summary's time table under --clock model|host (modelled GPU time)
* app.py: starting the application and the whole `ptxc run`
* shim.py: finding (or building) the native library
* driver_modules.py, driver_images.py, ptx_link.py: the driver API's modules
  (native/drv_*.c: libcuda.so.1 in the same library), their PTX, PTX linking
  (nvlink's rules, also for rdc.py);
  cudadevrt_ptx.py: the device runtime's grid-group functions as PTX
* driver_funcs_ptx.py: device functions the driver provides at module load
  (cudaGraphSetConditional), appended to the modules that declare them
* driver_api_table.py: docs/driver-api.md, the driver functions ptxc implements
* driver_env.py: the preloads that put the driver API in front of Python
  GPU programs (docs/python-gpu.md)
* cubin_ptx.py, ptxas_keep.py: the PTX of Triton's cubins (ptxc's ptxas
  wrapper, Triton's cache)
"""
