from gen import *
G=[1000,1000,1000,1000,1000]
def gs(dt_es,rank): 
    s=[];x=1024*1024*16
    return [x*(i+1) for i in range(rank-1)]
out=[]
for dt,es in [(0,1),(7,4),(4,8)]:
  for b0 in [16//es or 1, 128//es, 256]:
    if b0*es%16: continue
    for b1 in [1,16,64,128,255,256]:
      for b2 in [1,2,3,4,8,16,32,64,128,255,256]:
        out.append(T(dt,3,G,gs(es,3),[b0,b1,b2],[1,1,1]))
# estride effect
for e in [1,2,4,8]:
  for b2 in [64,128,255,256]:
    out.append(T(7,3,G,gs(4,3),[32,256,b2],[1,1,e]))
    out.append(T(7,3,G,gs(4,3),[32,256,b2],[e,1,1]))
# rank 5
for b in [(16,16,16,16,16),(16,32,32,32,32),(16,256,2,2,2),(16,256,256,1,1),(16,256,4,4,4),(256,256,1,1,1),(256,16,16,1,1),(256,16,17,1,1),(256,64,64,1,1)]:
    out.append(T(0,5,G,gs(1,5),list(b),[1]*5))
print('\n'.join(out))
