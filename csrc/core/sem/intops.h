/* intops.h - integer and bit operations on lanes (sem_fn), chosen by resolve.c. */
#ifndef PA_SEM_INTOPS_H
#define PA_SEM_INTOPS_H

#include "sem/sem.h"

/* prmt modes (sem_ctl.aux) */
enum { SEM_PRMT_DEFAULT, SEM_PRMT_F4E, SEM_PRMT_B4E, SEM_PRMT_RC8, SEM_PRMT_ECL, SEM_PRMT_ECR, SEM_PRMT_RC16 };

void sem_prmt(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_shf(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_lop3(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_bfind(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_dp4a(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_dp2a(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_sad(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_mul24(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_bfe(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_bfi(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_bmsk(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_szext(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
/* fns.b32 d, mask, base, offset: the offset-th set bit of mask from base (9.7.1.17) */
void sem_fns(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_slct(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
/* add, sub, mul, mad, div, rem, and, or, xor, not, shl, shr, neg, abs, min, max, selp (intalu.c) */
void sem_int_alu(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_bitop(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);

#endif
