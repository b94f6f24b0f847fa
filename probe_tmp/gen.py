import sys
def T(dt,rank,gd,gs,box,es,il=0,sw=0,l2=0,oob=0,addr=0x7f0000000000,mis=0):
    pad=lambda a,n,v:list(a)+[v]*(n-len(a))
    return ' '.join(map(str,['T',dt,rank,'%x'%addr,mis]+pad(gd,5,1)+pad(gs,4,0)+pad(box,5,1)+pad(es,5,1)+[il,sw,l2,oob]))
def I(dt,rank,gd,gs,lo,hi,cpp,ppc,es,il=0,sw=0,l2=0,oob=0,addr=0x7f0000000000,mis=0):
    pad=lambda a,n,v:list(a)+[v]*(n-len(a))
    return ' '.join(map(str,['I',dt,rank,'%x'%addr,mis]+pad(gd,5,1)+pad(gs,4,0)+pad(lo,3,0)+pad(hi,3,0)+[cpp,ppc]+pad(es,5,1)+[il,sw,l2,oob]))
