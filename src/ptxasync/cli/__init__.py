"""The ``ptxasync`` command (also ``python -m ptxasync``).

    ptxasync tour     [--out DIR]          the end-to-end example: figures and a summary
    ptxasync layout   --dtype bf16 --box 8 64 --swizzle 128B --dst 0x400 [-o FILE]
    ptxasync explain  --json map.json | --hex <256 hex digits> | flags
    ptxasync golden   FILE.jsonl.gz ...    check recorded hardware results
    ptxasync golden record -o OUT FILE ...  run recorded cases again on this GPU and record them
    ptxasync banks    --box 32 64 --pattern column   bank conflicts under each swizzle
    ptxasync reads    --box 64 64 --dst 0x1180 --desc-swizzle 64B   what a wgmma / ldmatrix reads
    ptxasync ptx      check FILE | format FILE   PTX checked as ptxas does / printed canonically

Exit status: 0 ok, 1 a check failed (a golden case, a map that breaks a rule,
a tour mismatch), 2 usage error or unreadable input.

Each subcommand is a module here with ``NAME``, ``HELP``, ``add_arguments(parser)``
and ``run(args) -> int``; add a module to ``COMMANDS`` to add a subcommand.
"""
import argparse
import sys

from . import banks, explain, golden, layout, ptx, reads, tour

# the order `ptxasync --help` lists them in
COMMANDS = [tour, layout, explain, golden, banks, reads, ptx]

OK, FAILED, USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input the user can fix (exit status 2)."""


def parser():
    ap = argparse.ArgumentParser(
        prog="ptxasync",
        description="A bit-exact CPU model of NVIDIA's asynchronous data movement (TMA, "
                    "tensor maps, mbarriers). Run a subcommand with --help for its options.",
        epilog="exit status: 0 ok, 1 a check failed, 2 usage error or unreadable input")
    from .. import __version__
    ap.add_argument("--version", action="version", version=f"ptxasync {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for mod in COMMANDS:
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return ap


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:2] == ["golden", "record"]:      # ptxasync golden record ...: a command of its own
        return golden.record_main(argv[2:])
    ap = parser()
    args = ap.parse_args(argv)   # exits 2 on a bad flag
    if args.command is None:
        ap.print_help(sys.stderr)
        print("\nptxasync: choose a command (try: ptxasync tour)", file=sys.stderr)
        return USAGE
    try:
        return int(args._run(args))
    except UsageError as e:
        print(f"ptxasync {args.command}: {e}", file=sys.stderr)
        return USAGE
    except ImportError as e:
        print(f"ptxasync {args.command}: {e}", file=sys.stderr)
        return USAGE
    except BrokenPipeError:  # `ptxasync ... | head`
        return OK
