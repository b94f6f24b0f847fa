#include <cuda.h>
#include <stdio.h>
#include <string.h>
int main(void){
  cuInit(0); CUdevice d; cuDeviceGet(&d,0); CUcontext c; cuDevicePrimaryCtxRetain(&c,d); cuCtxSetCurrent(c);
  char k[4];
  static __attribute__((aligned(128))) unsigned char buf[256];
  while (scanf("%3s",k)==1){
    int dt,rank; unsigned long long addr,mis; cuuint64_t gd[5],gs[4]; cuuint32_t box[5],es[5]; int lo[3],hi[3]; unsigned cpp,ppc; int il,sw,l2,oob;
    scanf("%d %d %llx %llu",&dt,&rank,&addr,&mis);
    for(int i=0;i<5;i++)scanf("%llu",(unsigned long long*)&gd[i]);
    for(int i=0;i<4;i++)scanf("%llu",(unsigned long long*)&gs[i]);
    if(k[0]=='T'){for(int i=0;i<5;i++)scanf("%u",&box[i]);}
    else {for(int i=0;i<3;i++)scanf("%d",&lo[i]);for(int i=0;i<3;i++)scanf("%d",&hi[i]);scanf("%u %u",&cpp,&ppc);}
    for(int i=0;i<5;i++)scanf("%u",&es[i]);
    scanf("%d %d %d %d",&il,&sw,&l2,&oob);
    memset(buf,0,sizeof buf);
    CUtensorMap *m=(CUtensorMap*)(buf+mis);
    CUresult r;
    if(k[0]=='T') r=cuTensorMapEncodeTiled(m,dt,rank,(void*)addr,gd,gs,box,es,il,sw,l2,oob);
    else r=cuTensorMapEncodeIm2col(m,dt,rank,(void*)addr,gd,gs,lo,hi,cpp,ppc,es,il,sw,l2,oob);
    printf("%d ",(int)r); for(int i=0;i<128;i++)printf("%02x",buf[mis+i]); printf("\n");
  }
  return 0;
}
