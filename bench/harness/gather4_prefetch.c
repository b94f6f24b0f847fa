/* gather4_prefetch.c - the gather4 pass alone (copy/gather4run.c and the
 * AVX-512 rows_at of copy/lines.c, its prefetch made a parameter): random
 * 128-byte rows at 16-byte-aligned columns of a 256 MiB tensor, 64 loads of
 * four rows a pass, 128B swizzle, against a memcpy of each row as
 * bench_core's gather4_load baseline does. docs/performance.md ("gather4:
 * every line of a row fetched").
 *
 *   gcc -O2 -o gather4_prefetch bench/harness/gather4_prefetch.c && ./gather4_prefetch
 *
 * aN: the row N rows ahead fetched (its first and last line; "all": every
 * line); printed: the median ratio memcpy time / pass time of 101 rounds and
 * its quartiles. x86-64 with AVX-512 only.
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#define ROWS 16384u
#define RB 16384u
#define G4 4096
static uint8_t *T, *S, *scratch; static uint32_t rows[G4][4], col[G4]; volatile uint8_t sink;
static uint64_t rs=88172645463325252ull; static uint64_t rnd(void){rs^=rs<<13;rs^=rs>>7;rs^=rs<<17;return rs;}
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int AHEAD=24, ALL=0, HINT=3;
#define PF(p) do{ if(HINT==3) _mm_prefetch((const char*)(p),_MM_HINT_T0); else if(HINT==2) _mm_prefetch((const char*)(p),_MM_HINT_T1); else _mm_prefetch((const char*)(p),_MM_HINT_NTA);}while(0)
__attribute__((target("avx512f"),noinline)) static void rows_at(uint8_t *smem, const uint32_t *a, const uint8_t *const *src, uint32_t n, uint32_t nfetch){
  const __m512i iota=_mm512_setr_epi64(0,1,2,3,4,5,6,7);
  for(uint32_t r=0;r<n;r++){
    if(AHEAD && r+AHEAD<nfetch){ const uint8_t*p=src[r+AHEAD]; PF(p); if(ALL) PF(p+64); PF(p+127);} 
    __m512i lo=_mm512_loadu_si512(src[r]), hi=_mm512_loadu_si512(src[r]+64);
    uint32_t k=(a[r]>>7)&7; __m512i idx=_mm512_xor_si512(iota,_mm512_set1_epi64(2*(k&3))); uint32_t h=(k>>2)*64;
    _mm512_storeu_si512(smem+a[r]+h,_mm512_permutexvar_epi64(idx,lo));
    _mm512_storeu_si512(smem+a[r]+(64^h),_mm512_permutexvar_epi64(idx,hi));
  }
}
static void model(void){
  for(uint32_t done=0; done<G4; done+=64){
    const uint8_t *src[4*(64+32)]; uint32_t a[4*(64+32)]; uint32_t ex=(AHEAD+3)/4, f;
    for(f=0; f<64+ex && done+f<G4; f++) for(int k=0;k<4;k++){ src[4*f+k]=T+(size_t)rows[done+f][k]*RB+2*col[done+f]; a[4*f+k]=1024+512*f+128*k; }
    rows_at(S,a,src,256,4*f);
  }
}
static void base(void){ for(int i=0;i<G4;i++) for(int k=0;k<4;k++) memcpy(scratch+512*(i&63)+128*k, T+(size_t)rows[i][k]*RB+2*col[i],128); sink=scratch[0]; }
static int cmpd(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(void){
  size_t TS=(size_t)ROWS*RB; T=aligned_alloc(2<<20,TS); madvise(T,TS,MADV_HUGEPAGE); S=aligned_alloc(4096,1<<17); scratch=aligned_alloc(4096,1<<16);
  for(size_t i=0;i<TS;i+=8){uint64_t v=rnd(); memcpy(T+i,&v,8);}
  for(int i=0;i<G4;i++){ col[i]=(uint32_t)(rnd()%((RB-128)/16))*8; for(int k=0;k<4;k++) rows[i][k]=rnd()%ROWS; }
  struct{int ahead,all,hint;const char*nm;} V[]={{24,0,3,"a24"},{24,1,3,"a24all"},{16,1,3,"a16all"},{12,1,3,"a12all"},{8,1,3,"a8all"},{0,0,3,"none"},{16,0,3,"a16"},{32,1,3,"a32all"}};
  enum{NV=8,R=101}; double rat[NV][R];
  base(); model();
  for(int rep=0;rep<R;rep++) for(int v=0;v<NV;v++){
    AHEAD=V[v].ahead; ALL=V[v].all; HINT=V[v].hint;
    double t0=now(); base(); double t1=now(); model(); double t2=now(); rat[v][rep]=(t1-t0)/(t2-t1);
  }
  for(int v=0;v<NV;v++){qsort(rat[v],R,sizeof(double),cmpd);printf("%-10s %.3f [%.3f %.3f]\n",V[v].nm,rat[v][R/2],rat[v][R/4],rat[v][3*R/4]);}
}
