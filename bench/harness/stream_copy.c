/* stream_copy.c - 32 KiB copies at random 8 KiB-aligned places of a 32 MiB
 * buffer, in the ways docs/performance.md compares with the C library's
 * memcpy ("The swizzled .im2col column on the AMD machine").
 *
 *   gcc -O2 -o stream_copy bench/harness/stream_copy.c && ./stream_copy [512|4096]
 *
 * 512 runs a round come from L3, as bench_core's im2col_load's do; 4096 from
 * DRAM. Each variant is timed against a memcpy in the same round, 101 rounds;
 * printed: the median ratio memcpy time / variant time and its quartiles.
 * sw: the 128B swizzle as copy/lines.c's lines_in_avx512 moves it (pfd > 0:
 * the source prefetched that far ahead, odd: into L2 only); swi: the same with
 * immediate lane shuffles; swboth: the destination fetched for writing `dist`
 * ahead and the source `sdist` ahead. x86-64 with AVX-512 only.
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#define NT 4096   /* runs a round: the first NR of them (512: from L3, 4096: from DRAM) */
static uint8_t *T, *D; static uint32_t off[NT]; volatile uint8_t sink;
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static const __m512i *dummy; static int HINT=3;
__attribute__((target("avx512f"),noinline)) static void sw(uint8_t *d, const uint8_t *s, int pfd, int unroll){ (void)unroll;
  const __m512i iota=_mm512_setr_epi64(0,1,2,3,4,5,6,7);
  for (uint32_t r=0;r<256;r+=2, s+=256){
    if (pfd==-1){} else if (pfd&1){ pfd--; _mm_prefetch((const char*)s+pfd,_MM_HINT_T1); _mm_prefetch((const char*)s+pfd+64,_MM_HINT_T1);_mm_prefetch((const char*)s+pfd+128,_MM_HINT_T1);_mm_prefetch((const char*)s+pfd+192,_MM_HINT_T1); pfd++;} else if (pfd){ _mm_prefetch((const char*)s+pfd,_MM_HINT_T0); _mm_prefetch((const char*)s+pfd+64,_MM_HINT_T0);_mm_prefetch((const char*)s+pfd+128,_MM_HINT_T0);_mm_prefetch((const char*)s+pfd+192,_MM_HINT_T0);}
    __m512i v0=_mm512_loadu_si512(s),v1=_mm512_loadu_si512(s+64),v2=_mm512_loadu_si512(s+128),v3=_mm512_loadu_si512(s+192);
    uint32_t k0=r&7,k1=(r+1)&7;
    __m512i i0=_mm512_xor_si512(iota,_mm512_set1_epi64(2*(k0&3))), i1=_mm512_xor_si512(iota,_mm512_set1_epi64(2*(k1&3)));
    uint32_t h0=(k0>>2)*64,h1=(k1>>2)*64; uint8_t *l=d+r*128;
    _mm512_storeu_si512(l+h0,_mm512_permutexvar_epi64(i0,v0));
    _mm512_storeu_si512(l+(64^h0),_mm512_permutexvar_epi64(i0,v1));
    _mm512_storeu_si512(l+128+h1,_mm512_permutexvar_epi64(i1,v2));
    _mm512_storeu_si512(l+128+(64^h1),_mm512_permutexvar_epi64(i1,v3));
  }
}
/* 8 rows a step with fixed immediates */
static uint32_t SW8N=256;
__attribute__((target("avx512f"),noinline)) static void sw8(uint8_t *d, const uint8_t *s, int pfd){
  for (uint32_t r=0;r<SW8N;r+=8, s+=1024, d+=1024){
    if (pfd) for(int j=0;j<16;j++) _mm_prefetch((const char*)s+pfd+64*j,_MM_HINT_T0);
    __m512i v[16];
    for(int j=0;j<16;j++) v[j]=_mm512_loadu_si512(s+64*j);
#define ST(row,imm) { int h=(row>>2)&1; _mm512_storeu_si512(d+row*128+64*h,_mm512_shuffle_i64x2(v[2*row],v[2*row],imm)); _mm512_storeu_si512(d+row*128+64*(1-h),_mm512_shuffle_i64x2(v[2*row+1],v[2*row+1],imm)); }
    ST(0,0xE4) ST(1,0xB1) ST(2,0x4E) ST(3,0x1B) ST(4,0xE4) ST(5,0xB1) ST(6,0x4E) ST(7,0x1B)
  }
}
__attribute__((target("avx512f"),noinline)) static void plain(uint8_t *d, const uint8_t *s){
  for (uint32_t r=0;r<512;r+=4){ __m512i a=_mm512_loadu_si512(s+64*r),b=_mm512_loadu_si512(s+64*r+64),c=_mm512_loadu_si512(s+64*r+128),e=_mm512_loadu_si512(s+64*r+192);
   _mm512_storeu_si512(d+64*r,a);_mm512_storeu_si512(d+64*r+64,b);_mm512_storeu_si512(d+64*r+128,c);_mm512_storeu_si512(d+64*r+192,e);}
}


static void repmovsb(uint8_t*d,const uint8_t*s,size_t n){ __asm__ volatile("rep movsb":"+D"(d),"+S"(s),"+c"(n)::"memory"); }
__attribute__((target("avx2"),noinline)) static void ymm(uint8_t *d, const uint8_t *s){
  for (uint32_t r=0;r<1024;r+=4){ __m256i a=_mm256_loadu_si256((void*)(s+32*r)),b=_mm256_loadu_si256((void*)(s+32*r+32)),c=_mm256_loadu_si256((void*)(s+32*r+64)),e=_mm256_loadu_si256((void*)(s+32*r+96));
   _mm256_storeu_si256((void*)(d+32*r),a);_mm256_storeu_si256((void*)(d+32*r+32),b);_mm256_storeu_si256((void*)(d+32*r+64),c);_mm256_storeu_si256((void*)(d+32*r+96),e);}
}
__attribute__((target("avx512f"),noinline)) static void z8(uint8_t *d, const uint8_t *s){
  for (uint32_t r=0;r<512;r+=8){ __m512i v[8]; for(int j=0;j<8;j++) v[j]=_mm512_load_si512(s+64*(r+j)); for(int j=0;j<8;j++) _mm512_store_si512(d+64*(r+j),v[j]);}
}
__attribute__((target("avx512f"),noinline)) static void z2(uint8_t *d, const uint8_t *s){
  for (uint32_t r=0;r<512;r+=2){ __m512i a=_mm512_load_si512(s+64*r),b=_mm512_load_si512(s+64*r+64); _mm512_store_si512(d+64*r,a);_mm512_store_si512(d+64*r+64,b);}
}

static uint8_t tmpb[8192] __attribute__((aligned(64)));
__attribute__((target("avx512f"),noinline)) static void two(uint8_t *d, const uint8_t *s, size_t ch){
  for (size_t o=0;o<32768;o+=ch){ repmovsb(tmpb,s+o,ch); sw8(d+o,tmpb,0); }
}

__attribute__((target("avx512f"),noinline)) static void swi(uint8_t *d, const uint8_t *s){
  for (uint32_t r=0;r<256;r+=8, s+=1024, d+=1024){
#define PAIR(row,i0,i1) { __m512i a0=_mm512_loadu_si512(s+row*128),a1=_mm512_loadu_si512(s+row*128+64),b0=_mm512_loadu_si512(s+row*128+128),b1=_mm512_loadu_si512(s+row*128+192); int h=(row>>2)&1; \
   _mm512_storeu_si512(d+row*128+64*h,_mm512_shuffle_i64x2(a0,a0,i0)); _mm512_storeu_si512(d+row*128+64*(1-h),_mm512_shuffle_i64x2(a1,a1,i0)); \
   _mm512_storeu_si512(d+row*128+128+64*h,_mm512_shuffle_i64x2(b0,b0,i1)); _mm512_storeu_si512(d+row*128+128+64*(1-h),_mm512_shuffle_i64x2(b1,b1,i1)); }
    PAIR(0,0xE4,0xB1) PAIR(2,0x4E,0x1B) PAIR(4,0xE4,0xB1) PAIR(6,0x4E,0x1B)
  }
}




__attribute__((target("avx512f,prfchw"),noinline)) static void swboth(uint8_t *d, const uint8_t *s, int dist, int sdist){
  const __m512i iota=_mm512_setr_epi64(0,1,2,3,4,5,6,7);
  for (uint32_t r=0;r<256;r+=2, s+=256){
    uint8_t *l=d+r*128;
    if (dist && r*128+dist < 32768) { __builtin_prefetch(l+dist,1,3); __builtin_prefetch(l+dist+64,1,3); __builtin_prefetch(l+dist+128,1,3); __builtin_prefetch(l+dist+192,1,3);}
    if (sdist && r*128+sdist < 32768) { __builtin_prefetch(s+sdist,0,3); __builtin_prefetch(s+sdist+64,0,3); __builtin_prefetch(s+sdist+128,0,3); __builtin_prefetch(s+sdist+192,0,3);}
    __m512i v0=_mm512_loadu_si512(s),v1=_mm512_loadu_si512(s+64),v2=_mm512_loadu_si512(s+128),v3=_mm512_loadu_si512(s+192);
    uint32_t k0=r&7,k1=(r+1)&7;
    __m512i i0=_mm512_xor_si512(iota,_mm512_set1_epi64(2*(k0&3))), i1=_mm512_xor_si512(iota,_mm512_set1_epi64(2*(k1&3)));
    uint32_t h0=(k0>>2)*64,h1=(k1>>2)*64;
    _mm512_storeu_si512(l+h0,_mm512_permutexvar_epi64(i0,v0));
    _mm512_storeu_si512(l+(64^h0),_mm512_permutexvar_epi64(i0,v1));
    _mm512_storeu_si512(l+128+h1,_mm512_permutexvar_epi64(i1,v2));
    _mm512_storeu_si512(l+128+(64^h1),_mm512_permutexvar_epi64(i1,v3));
  }
}

static int cmpd(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  int nr = argc > 1 ? atoi(argv[1]) : 512;
  if (nr < 1 || nr > NT) nr = 512;
  size_t TS=32<<20; T=aligned_alloc(2<<20,TS); madvise(T,TS,MADV_HUGEPAGE); D=aligned_alloc(4096,1<<16);
  for(size_t i=0;i<TS;i++)
    T[i]=(uint8_t)(i*7);
  srand(1);
  for(int i=0;i<NT;i++) off[i]=((rand()%64)*64+(rand()%61))*64*128;
  static const char *nm[]={"rep movsb","64B x4","64B x2","64B x8","32B x4","sw","swi","sw8 (unrolled, immediates)",
      "sw src 1K","sw src 2K","sw src 4K","sw src 4K into L2","stage 2K + sw8","stage 4K + sw8",
      "sw dst 8K","sw dst 8K + src 4K"};
  enum{NV=16,R=101}; static double rat[NV][R];
  for(int rep=0;rep<R;rep++) for(int v=0;v<NV;v++){
    double t0=now(); for(int i=0;i<nr;i++) memcpy(D,T+off[i],32768); double t1=now();
    double tm=t1-t0;
    t0=now();
    for(int i=0;i<nr;i++){ const uint8_t *s=T+off[i]; switch(v){
      case 0: repmovsb(D,s,32768); break; case 1: plain(D,s); break; case 2: z2(D,s); break; case 3: z8(D,s); break;
      case 4: ymm(D,s); break; case 5: sw(D,s,0,2); break; case 6: swi(D,s); break; case 7: SW8N=256; sw8(D,s,0); break;
      case 8: sw(D,s,1024,2); break; case 9: sw(D,s,2048,2); break; case 10: sw(D,s,4096,2); break; case 11: sw(D,s,4097,2); break;
      case 12: SW8N=16; two(D,s,2048); break; case 13: SW8N=32; two(D,s,4096); break;
      case 14: swboth(D,s,8192,0); break; case 15: swboth(D,s,8192,4096); break; } }
    t1=now(); rat[v][rep]=tm/(t1-t0);
  }
  printf("%d runs a round, memcpy time / variant time, median [quartiles] of %d rounds\n", nr, R);
  for(int v=0;v<NV;v++){qsort(rat[v],R,sizeof(double),cmpd);printf("%-28s %.3f [%.3f %.3f]\n",nm[v],rat[v][R/2],rat[v][R/4],rat[v][3*R/4]);}
  (void)sink; (void)dummy; (void)HINT;
  return 0;
}
