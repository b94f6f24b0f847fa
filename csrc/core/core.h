/* core.h - every internal header of the core, for the CPython binding and
 * the core's own C tests (a C user includes csrc/include/ptxasync.h only). */
#ifndef PA_CORE_H
#define PA_CORE_H

#include "types.h"
#include "tensormap.h"
#include "layout.h"
#include "memory.h"
#include "mbarrier.h"
#include "reduce.h"
#include "simd.h"
#include "copy/copy.h"
#include "engine.h"
#include "batch.h"
#include "consumers/wgmma_desc.h"
#include "consumers/ldmatrix.h"
#include "consumers/banks.h"
#include "check/watch.h"
#include "check/hb.h"

#endif
