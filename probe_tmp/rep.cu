#include <cstdio>
#include <cstdint>
__global__ void k(uint64_t *slot, uint64_t v, int which){
  if(which==0) asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 4, %1;"::"l"(slot),"l"(v):"memory");
  else asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 3, %1;"::"l"(slot),"l"(v):"memory");
}
int main(){
  uint64_t *d; cudaMalloc(&d,128);
  uint64_t vals[]={0x0000003456789ab0ull, 0x000000f000000010ull, 0x0000001234567890ull, 0xffffffffffffffffull};
  for(int w=0;w<2;w++) for(uint64_t v: vals){
    unsigned char h[128]; for(int i=0;i<128;i++)h[i]=0x11*(i%16==0?0:1)+ (i&0xf);
    cudaMemcpy(d,h,128,cudaMemcpyHostToDevice);
    k<<<1,1>>>(d,v,w); cudaDeviceSynchronize();
    cudaMemcpy(h,d,128,cudaMemcpyDeviceToHost);
    printf("%d %016llx ",w,(unsigned long long)v); for(int i=0;i<128;i++)printf("%02x",h[i]); printf(" %s\n",cudaGetErrorString(cudaGetLastError()));
  }
}
