/* The driver's export tables (drv_export.c) and the runtime's check of the
 * driver (drv_integrity.c). */
#ifndef PTXC_DRV_EXPORT_H
#define PTXC_DRV_EXPORT_H

#include "driver.h"

enum { EXPORT_CUDART, EXPORT_HOOKS, EXPORT_TLS, EXPORT_CLS, EXPORT_WRAPPER, EXPORT_INTEGRITY,
       EXPORT_TABLES };

const void *drv_export_table(int which);   /* the table handed out for that UUID */
const void *drv_integrity_slot(void);      /* the function in slot 1 of EXPORT_INTEGRITY */
CUresult drv_integrity_check(uint32_t runtime_version, uint64_t timestamp, unsigned char *out);
void drv_cls_release(CUcontext ctx);       /* the context's local storage ends */
void ptxc_md2(const void *data, size_t len, unsigned char out[16]);

/* the driver calls the tables' slots use (drv_*.c) */
CUresult cuDeviceGetCount(int *n);
CUresult cuDriverGetVersion(int *v);
CUresult cuDeviceGetAttribute(int *value, int attr, CUdevice dev);
CUresult cuDeviceGetUuid_v2(unsigned char *uuid, CUdevice dev);
CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fatbin);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                        void **extra);
CUcontext drv_current_ctx(void);
CUcontext drv_primary_ctx(void);
int drv_ctx_valid(CUcontext c);

#endif
