/* ptxasync.h - the one public header of the ptxasync core.
 *
 * A CPU reference model of NVIDIA's asynchronous data movement (sm_90):
 * tensor maps, cp.async.bulk.tensor, bulk reductions, mbarriers. Plain C11;
 * nothing here knows Python.
 */
#ifndef PTXASYNC_H
#define PTXASYNC_H

#include "../core/types.h"
#include "../core/tensormap.h"
#include "../core/layout.h"
#include "../core/memory.h"
#include "../core/mbarrier.h"
#include "../core/reduce.h"
#include "../core/simd.h"
#include "../core/copy/copy.h"
#include "../core/engine.h"
#include "../core/batch.h"
#include "../core/consumers/wgmma_desc.h"
#include "../core/consumers/ldmatrix.h"
#include "../core/consumers/banks.h"
#include "../core/check/watch.h"

#endif
