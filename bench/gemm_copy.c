/* gemm_copy.c - the gemm_replay key's bytes without the model's bookkeeping:
 *
 *     gcc -std=c11 -O2 -Icsrc/core -Icsrc/include bench/gemm_copy.c \
 *         $(find csrc/core -name '*.c') -o gemm_copy -lm -pthread && ./gemm_copy
 *
 * (0) the key's baseline (memcpy_rows: every A tile, then every B tile, into
 * one 16 KiB destination), (1) memcpy in the replay's order (the A and B tile
 * of each k-step) into its 4 rotating 32 KiB stages, (2) the model's row writer
 * (copy/lines.c, 128B swizzle) in the replay's order and stages. A and B are
 * 4096 x 4096 bf16 on 64-byte boundaries; thread CPU time, three rounds. */
#define _GNU_SOURCE
#include "copy/rows.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+1e-9*t.tv_nsec;}
#define M 4096
#define K 4096
int main(void){
  size_t sz=(size_t)M*K*2;
  uint8_t *A=aligned_alloc(1<<21,sz), *B=aligned_alloc(1<<21,sz);
  madvise(A,sz,MADV_HUGEPAGE); madvise(B,sz,MADV_HUGEPAGE);
  for(size_t i=0;i<sz;i++){A[i]=(uint8_t)(i*7);B[i]=(uint8_t)(i*13);}
  uint8_t *smem=aligned_alloc(4096, 200*1024); memset(smem,0,200*1024);
  pa_swz_view sv; pa_swz_init(&sv, smem, PA_SWIZZLE_128B);
  size_t tile=16384; double total=2.0*32*32*64*tile;
  for(int rep=0;rep<3;rep++)
  for(int variant=0;variant<3;variant++){
    double t0=now(); int step=0;
    if(variant==0){
      for(int w=0;w<2;w++){uint8_t*S=w?B:A;
      for(int m=0;m<32;m++)for(int n=0;n<32;n++)for(int k=0;k<64;k++){
        const uint8_t*s=S+(size_t)(w?n:m)*128*K*2+(size_t)k*128;
        for(int r=0;r<128;r++)memcpy(smem+r*128,s+(size_t)r*K*2,128);}}
    } else
    for(int m=0;m<32;m++)for(int n=0;n<32;n++)for(int k=0;k<64;k++){
      int s4=step++%4; uint32_t base=1024+s4*2*tile; uint8_t*d=smem+base;
      const uint8_t*sa=A+(size_t)m*128*K*2+(size_t)k*128,*sb=B+(size_t)n*128*K*2+(size_t)k*128;
      if(variant==1){
        for(int r=0;r<128;r++)memcpy(d+r*128,sa+(size_t)r*K*2,128);
        for(int r=0;r<128;r++)memcpy(d+tile+r*128,sb+(size_t)r*K*2,128);
      } else {
        for(uint32_t r=0;r<PA_PREFETCH_ROWS;r++)pa_prefetch_row(sa+(size_t)r*K*2,128);
        sv.lines_in(smem, sv.xtab, base, sa, K*2, 128, 0);
        for(uint32_t r=0;r<PA_PREFETCH_ROWS;r++)pa_prefetch_row(sb+(size_t)r*K*2,128);
        sv.lines_in(smem, sv.xtab, base+tile, sb, K*2, 128, 0);
      }}
    double t=now()-t0;
    static const char *const what[3]={"baseline memcpy_rows order, one 16 KiB dst","memcpy, replay order, 4 stages","model row writer, replay order, 4 stages"};
    printf("round %d  %-44s %6.2f GB/s\n",rep,what[variant],total/t/1e9);
  }
  return smem[5]==0x5a;
}
