/* video.h - the video instructions (PTX ISA 9.7.18) on lanes: the scalar ones on
 * byte / half-word / word parts extended to 33 bits, the SIMD ones on two half-words
 * or four bytes; and where their selectors sit in a sem_ctl. */
#ifndef PA_SEM_VIDEO_H
#define PA_SEM_VIDEO_H

#include "sem/sem.h"

/* The secondary operation (sem_ctl.aux2): the scalar forms' .op2, the SIMD forms' .add. */
enum { SEM_VOP2_NONE, SEM_VOP2_ADD, SEM_VOP2_MIN, SEM_VOP2_MAX };

/* vmad's scale (sem_ctl.aux): the right shift of .shr7 / .shr15, 0 none. */

/* A scalar selector (9.7.18.1: partSelectSignExtend, optSaturate, optMerge): the word,
   a byte .b0-.b3, a half-word .h0 .h1. */
enum { SEM_VSEL_WORD, SEM_VSEL_B0, SEM_VSEL_B1, SEM_VSEL_B2, SEM_VSEL_B3, SEM_VSEL_H0, SEM_VSEL_H1 };

/* sem_ctl.imm of a video instruction. Scalar forms: asel, bsel, dsel (SEM_VSEL_*) in bits 0-3,
   4-7, 8-11. SIMD forms: lane i's element of the pair {b, a} (bytes 0-7 / halves 0-3, a's
   first) for a at bits 3i, for b at 12 + 3i; the lanes of the mask at bits 24-27; bits 28, 29,
   30 say that asel, bsel, mask were written, else the ISA's defaults (.h10 .h32 .h10;
   .b3210 .b7654 .b3210). */
#define SEM_VID_ASEL(imm) ((imm) & 0xFu)
#define SEM_VID_BSEL(imm) (((imm) >> 4) & 0xFu)
#define SEM_VID_DSEL(imm) (((imm) >> 8) & 0xFu)
enum { SEM_VID_B_SHIFT = 12, SEM_VID_MASK_SHIFT = 24, SEM_VID_A_SET = 1u << 28, SEM_VID_B_SET = 1u << 29,
       SEM_VID_MASK_SET = 1u << 30 };

void sem_vadd(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_vsub(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_vabsdiff(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_vmin(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_vmax(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_vshl(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_vshr(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_vset(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
void sem_vmad(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);
/* the SIMD forms (video_simd.c): the operation in k->op, two or four lanes by it */
void sem_video_simd(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);

/* The function of a video operation (resolve.c asks). */
sem_fn sem_video_fn(int op);

#endif
