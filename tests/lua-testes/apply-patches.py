# Rebuilds the vendored files from pristine Lua 5.5.1 testes and patches.txt (PATCHES.md):
#   python3 tests/lua-testes/apply-patches.py /path/to/lua-5.5.1/testes
# Every patch keeps the file's line count. Only the .lua files already here are written.
# patches.txt lines:  FILE c LINE TAG reason...   (comment out one line)
#                     FILE b START END TAG reason...  (skip lines START..END)
#                     FILE s LINE OLD=>NEW TAG reason (replace text in one line)
import sys, shutil, os
DST=os.path.dirname(os.path.abspath(__file__))
SRC=sys.argv[1]
lines=[l.rstrip('\n') for l in open(os.path.join(DST,'patches.txt')) if l.strip() and not l.startswith('#')]
files={}
def get(f):
    if f not in files: files[f]=open(f'{SRC}/{f}',encoding='latin-1').read().split('\n')
    return files[f]
for l in lines:
    parts=l.split(' ')
    f,op=parts[0],parts[1]
    L=get(f)
    if op=='c':
        n=int(parts[2]); tag=parts[3]
        L[n-1]=f'--[[RUNVIL({tag})]] --'+L[n-1]
    elif op=='b':
        a,b=int(parts[2]),int(parts[3]); tag=parts[4]
        L[a-1]=f'if false then --[[RUNVIL({tag})]] '+L[a-1]
        L[b]=f'end --[[RUNVIL]] '+L[b]
    elif op=='X':
        n=int(parts[2])
        L[n-1]=''.join(c if ord(c)<128 else '\\x%02x'%ord(c) for c in L[n-1])
    elif op in ('s','S'):
        n=int(parts[2]); rest=' '.join(parts[3:]); spec,tag=rest.rsplit(' ',1) if False else (rest.split(' ##')[0], rest.split(' ##')[1])
        old,new=spec.split('=>')
        assert old in L[n-1], (f,n,old,L[n-1])
        L[n-1]=L[n-1].replace(old,new,1)+(f' --[[RUNVIL({tag.strip()})]]' if op=='s' else '')
for f,L in files.items():
    open(f'{DST}/{f}','w',encoding='latin-1').write('\n'.join(L))
for f in os.listdir(SRC):
    if f.endswith('.lua') and f not in files and os.path.exists(f'{DST}/{f}'): shutil.copy(f'{SRC}/{f}', f'{DST}/{f}')
