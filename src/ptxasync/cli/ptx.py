"""PTX text: check a module as ptxas does, or print it canonically.

  check FILE    validate the module for its own .target and .version exactly as
                `ptxas -arch=<target>` of CUDA 13.5 would (--ptxas 13.0: CUDA 13.0's);
                one line per diagnostic on stderr, compiler style:
                FILE:LINE:COLUMN: error: MESSAGE, then the verdict and the ptxas it
                follows on stdout: FILE: accepted (as ptxas 13.5 -arch=sm_90a would);
                --arch sm_100a checks it for that target instead of its .target
  format FILE   print the module as canonical PTX text

FILE may be - for standard input.

examples:
  ptxasync ptx check kernel.ptx
  ptxasync ptx check --ptxas 13.0 kernel.ptx
  ptxasync ptx check --arch sm_100a kernel.ptx
  ptxasync ptx format kernel.ptx > canonical.ptx

exit status: 0 accepted, 1 rejected (an error diagnostic), 2 unreadable file.
"""
import re
import sys

NAME = "ptx"
HELP = "check PTX as ptxas does (ptx check FILE), print it canonically (ptx format FILE)"


def add_arguments(p):
    from ..ptx import PTXAS, PTXAS_RELEASES
    p.add_argument("action", choices=["check", "format"], help="what to do with the module")
    p.add_argument("file", help="a PTX file, or - for standard input")
    p.add_argument("--arch", metavar="TARGET", default=None,
                   help="check: the target to check for (sm_90a, sm_100a, ...) instead of the module's .target")
    p.add_argument("--ptxas", choices=PTXAS_RELEASES, default=PTXAS,
                   help=f"check: the ptxas release whose verdict to give (default {PTXAS})")


def _read(path):
    from . import UsageError
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None


def run(args):
    from .. import ptx
    text = _read(args.file)
    name = "<stdin>" if args.file == "-" else args.file
    if args.action == "format":
        if args.arch is not None:
            from . import UsageError
            raise UsageError("--arch applies to ptx check (format prints the module as it is)")
        try:
            sys.stdout.write(ptx.format(text))
        except ptx.PtxSyntaxError as e:
            for d in e.diagnostics:
                print(f"{name}:{d}", file=sys.stderr)
            return 1
        return 0
    from . import UsageError
    try:
        diags = ptx.check(text, target=args.arch, ptxas=args.ptxas)
    except ValueError as e:
        raise UsageError(f"--arch: {e}") from None
    for d in diags:
        print(f"{name}:{d}", file=sys.stderr)
    errors = sum(d.severity == "error" for d in diags)
    target = re.search(rb"^\s*\.target\s+([\w]+)", text, re.M)
    arch = f" -arch={args.arch or target.group(1).decode()}" if target else ""
    verdict = f"rejected ({errors} error{'s' * (errors != 1)})" if errors else "accepted"
    print(f"{name}: {verdict} (as ptxas {args.ptxas}{arch} would)")
    return 1 if errors else 0
