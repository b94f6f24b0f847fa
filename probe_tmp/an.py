import sys,math
ES=[1,2,4,4,8,8,2,4,8,2,4,4,4,1,1,1]
def parse(qf,of):
    rows=[]
    for q,o in zip(open(qf),open(of)):
        f=q.split(); r,h=o.split()
        rows.append((f,int(r),h))
    return rows
