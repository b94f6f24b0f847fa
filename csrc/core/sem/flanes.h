/* flanes.h - floating-point operations on lanes (sem_fn), chosen by resolve.c. */
#ifndef PA_SEM_FLANES_H
#define PA_SEM_FLANES_H

#include "sem/sem.h"

#define SEM_LANE_FN(name) void name(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
SEM_LANE_FN(sem_arith_f32);
SEM_LANE_FN(sem_arith_f16);
SEM_LANE_FN(sem_arith_bf16);
SEM_LANE_FN(sem_arith_f16x2);
SEM_LANE_FN(sem_arith_bf16x2);
SEM_LANE_FN(sem_arith_f64);
SEM_LANE_FN(sem_minmax_f32);
SEM_LANE_FN(sem_minmax_f64);
SEM_LANE_FN(sem_minmax_f16);
SEM_LANE_FN(sem_minmax_bf16);
SEM_LANE_FN(sem_minmax_f16x2);
SEM_LANE_FN(sem_minmax_bf16x2);
SEM_LANE_FN(sem_setp_float);
SEM_LANE_FN(sem_setp_int);
SEM_LANE_FN(sem_set);
SEM_LANE_FN(sem_testp);
SEM_LANE_FN(sem_copysign);
extern sem_fn sem_sign_lanes;

#endif
