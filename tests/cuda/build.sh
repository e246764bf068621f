#!/bin/sh
# Regenerates every tests/cuda/*.ptx from its .cu with the exact nvcc command, then checks
# each file with ptxas.  Tests never run this: the .ptx files are committed.
# Made with: Cuda compilation tools, release 13.0, V13.0.88 (nvcc 13.0).
# Usage: sh tests/cuda/build.sh   (from anywhere)
set -eu
cd "$(dirname "$0")"

run() { echo "+ $*"; "$@"; }

ptx() {   # ptx <topic> <variant> <nvcc flags...>
    topic=$1; variant=$2; shift 2
    run nvcc -ptx "$@" "$topic.cu" -o "$topic.$variant.ptx"
}

ptx textures      sm90          -arch=sm_90 -O3
ptx texture_layers sm90         -arch=sm_90 -O3
ptx wmma_band     sm90          -arch=sm_90 -O3
ptx indirect_calls sm90         -arch=sm_90 -O3

ptx recursion     sm90          -arch=sm_90 -O3
ptx heap_bounds   sm90          -arch=sm_90 -O3
ptx fast_access   sm90          -arch=sm_90 -O3
ptx outlined_checks sm90        -arch=sm_90 -O3
ptx uniform_loads sm90          -arch=sm_90 -O3
ptx agg_atomics   sm90          -arch=sm_90 -O3

ptx inlined_atomic sm90.lineinfo -arch=sm_90 -O3 -lineinfo

ptx hybrid_faults sm90          -arch=sm_90 -O3

for t in rdc_main rdc_lib rdc_dup rdc_undefined rdc_devrt; do
    ptx $t sm90.rdc -rdc=true -arch=sm_90 -O3
done

ptx provenance    sm90          -arch=sm_90 -O3
ptx provenance    sm90.G        -arch=sm_90 -G

ptx divergence    sm90          -arch=sm_90 -O3
ptx divergence    sm90.G        -arch=sm_90 -G
ptx divergence    sm90.O0       -arch=sm_90 -Xcicc -O0
ptx divergence    sm75.lineinfo -arch=sm_75 -O3 -lineinfo

ptx data_branch   sm90          -arch=sm_90 -O3
ptx data_branch   sm90.lineinfo -arch=sm_90 -O3 -lineinfo
ptx data_branch   sm75          -arch=sm_75 -O3

ptx loops         sm90          -arch=sm_90 -O3
ptx loops         sm90.O0       -arch=sm_90 -Xcicc -O0

ptx early_ret     sm90          -arch=sm_90 -O3
ptx early_ret     sm90.G        -arch=sm_90 -G

ptx switch        sm90          -arch=sm_90 -O3
ptx switch        sm90.O0       -arch=sm_90 -Xcicc -O0

ptx scopes        sm90          -arch=sm_90 -O3
ptx scopes        sm90.G        -arch=sm_90 -G

ptx func_call     sm90          -arch=sm_90 -O3
ptx func_call     sm75          -arch=sm_75 -O3

ptx two_writers   sm90          -arch=sm_90 -O3
ptx two_writers   sm90.O0       -arch=sm_90 -Xcicc -O0

ptx names         sm90          -arch=sm_90 -O3
ptx names         sm90.G        -arch=sm_90 -G
ptx names         sm90.lineinfo -arch=sm_90 -O3 -lineinfo

ptx guarded       sm90          -arch=sm_90 -O3
ptx guarded       sm75          -arch=sm_75 -O3

ptx unreachable   sm90          -arch=sm_90 -O3
ptx unreachable   sm90.O0       -arch=sm_90 -Xcicc -O0

ptx reduce_shared sm90          -arch=sm_90 -O3
ptx reduce_shared sm90.G        -arch=sm_90 -G

ptx warp          sm90          -arch=sm_90 -O3
ptx warp          sm75          -arch=sm_75 -O3

ptx atomics       sm90          -arch=sm_90 -O3
ptx atomics       sm75          -arch=sm_75 -O3

ptx intops        sm90          -arch=sm_90 -O3
ptx intops        sm75          -arch=sm_75 -O3

ptx fpops         sm90          -arch=sm_90 -O3
ptx fpops         sm75          -arch=sm_75 -O3

ptx launch_infer  sm90          -arch=sm_90 -O3
ptx profile_batch sm90          -arch=sm_90 -O3
ptx memory        sm90          -arch=sm_90 -O3
ptx cta_order     sm90          -arch=sm_90 -O3
ptx parallel_ctas sm90          -arch=sm_90 -O3
ptx launch_alias  sm90          -arch=sm_90 -O3
ptx cta_equiv     sm90          -arch=sm_90 -O3
ptx grid_stride   sm90          -arch=sm_90 -O3
ptx countdown     sm90          -arch=sm_90 -O3
ptx clock_spin    sm90          -arch=sm_90 -O3
ptx clock_delta   sm90          -arch=sm_90 -O3
ptx shared_atomics sm90         -arch=sm_90 -O3
ptx cp_async      sm90          -arch=sm_90 -O3
ptx heap          sm90          -arch=sm_90 -O3
ptx graph_set_conditional sm90 -arch=sm_90 -O3
ptx coop          sm90          -arch=sm_90 -O3
ptx mbarrier      sm90          -arch=sm_90 -O3
ptx race_mbarrier sm90          -arch=sm_90 -O3
ptx race_matrix  sm90          -arch=sm_90 -O3
ptx local_regs    sm90          -arch=sm_90 -O3
ptx warp_masks    sm90          -arch=sm_90 -O3
ptx warp_masks_f32 sm100a       -arch=sm_100a -O3
ptx profile_rows  sm90          -arch=sm_90 -O3
ptx profile_no_block sm90       -arch=sm_90 -O3
ptx device_calls  sm90          -arch=sm_90 -O3
ptx wmma          sm90          -arch=sm_90 -O3
ptx mma_sync      sm90          -arch=sm_90 -O3
ptx tc_kernels    sm90          -arch=sm_90 -O3
ptx partial_warp_mma sm90       -arch=sm_90 -O3
ptx memcheck      sm90.lineinfo -arch=sm_90 -O3 -lineinfo
ptx racecheck     sm90.lineinfo -arch=sm_90 -O3 -lineinfo
ptx synccheck     sm90.lineinfo -arch=sm_90 -O3 -lineinfo
ptx topdown       sm90          -arch=sm_90 -O3
ptx luo_suda      sm90          -arch=sm_90 -O3
ptx luo_suda_bench sm90         -arch=sm_90 -O3
ptx topdown_thesis sm90         -arch=sm_90 -O3
ptx initcheck     sm90.lineinfo -arch=sm_90 -O3 -lineinfo

ptx inlined_loc   sm90.lineinfo -arch=sm_90 -O3 -lineinfo
ptx inlined_loc   sm90.G        -arch=sm_90 -G

# Dynamic parallelism: relocatable device code (its device-runtime calls are
# extern until nvlink links libcudadevrt, so ptxas checks it with -c).
ptx cdp_launch    sm90.rdc      -rdc=true -arch=sm_90 -O3
ptx cdp_quicksort sm90.rdc      -rdc=true -arch=sm_90 -O3

# Every file must assemble.
for f in *.sm90*.ptx; do
    case "$f" in
        *.rdc.ptx) run ptxas -c -arch=sm_90 "$f" -o /dev/null ;;
        *) run ptxas -arch=sm_90 "$f" -o /dev/null ;;
    esac
done
for f in *.sm75*.ptx; do run ptxas -arch=sm_75 "$f" -o /dev/null; done
for f in *.sm100a*.ptx; do run ptxas -arch=sm_100a "$f" -o /dev/null; done
echo "build.sh: all PTX regenerated and checked"

ptx srcline       sm90.lineinfo -arch=sm_90 -O3 -lineinfo
ptx srcline       sm90.G        -arch=sm_90 -G

# clang (Debian clang 14.0.6; optional): device-only PTX with line tables, without the
# CUDA headers (clang 14 rejects CUDA 13's), sm_80 (clang 14 has no sm_90).
if command -v clang >/dev/null 2>&1; then
    run clang -x cuda --cuda-gpu-arch=sm_80 --cuda-device-only -nocudainc -nocudalib -S -O3 \
        -gline-tables-only -Wno-unknown-cuda-version -include clang_prelude.h \
        srcline.cu -o srcline.sm80.clang.ptx
fi
