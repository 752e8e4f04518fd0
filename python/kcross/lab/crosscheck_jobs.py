"""The job of ``kcross lab ARCH --crosscheck`` (its options: kcross.cli.lab; the other jobs:
kcross.lab.jobs): the kernel's selftests' sources fetched before anything is built, then
one counting boot with the harness and the selftests, the run's table and the selftests'
beside it (kcross.lab.crosscheck computes, kcross.lab.crosscheck_view shows)."""

from __future__ import annotations

import argparse

from rich.console import Console

from kcross.errors import EXIT_CHECK_FAILED, EXIT_OK
from kcross.lab.jobs import count_boot, describe_kernel, exit_status, make_guest, print_runs_json, store_runs
from kcross.lab.kernel import Kernel
from kcross.lab.linux_source import Source
from kcross.lab.payload import Payload
from kcross.lab.session import UNIT
from kcross.views.lines import say


def selftest_source(args: argparse.Namespace, kernel: Kernel, err: Console) -> Source:
    """--crosscheck's sources: Debian's linux-source of the kernel's version (fetched before
    anything is built, as the kernel is)."""
    from kcross.lab.linux_source import fetch_source
    from kcross.lab.selftests import WANTED

    return fetch_source(args.arch, kernel.version, WANTED,
                        say=lambda line: say(err, f"kcross lab: {line}"))


def crosscheck(args: argparse.Namespace, kernel: Kernel, payload: Payload, src: Source,
               out: Console, err: Console) -> int:
    """--crosscheck: the kernel's own selftests after the harness in one counting boot,
    their figures beside kcross's rows (kcross.lab.crosscheck)."""
    from kcross import render
    from kcross.lab.crosscheck import crosschecked, suites_for
    from kcross.lab.crosscheck_view import crosscheck_table
    from kcross.lab.selftests import build as build_selftests
    from kcross.lab.selftests import host_seconds, plan

    say(err, f"kcross lab: building the kernel's selftests for {args.arch} from "
             f"{src.package} {src.version} (static)...")
    built = build_selftests(args.arch, src)
    suites = tuple(args.suite.split(",")) if args.suite else suites_for(args.arch, args.crosscheck)
    # The slow selftests add their host time to the boot's limit (--timeout).
    longer = argparse.Namespace(**{**vars(args), "timeout": args.timeout
                                   + host_seconds(args.arch, args.crosscheck)})
    run = count_boot(longer, make_guest(args, kernel, "counting"), kernel, payload, None, err,
                 suites=suites, extra_plan=plan(args.arch, args.crosscheck),
                 extra_files=built.files())
    checked = crosschecked(args.arch, run, src, args.crosscheck)
    failed = any(not r.figures.passed for r in checked.rows)
    if args.json:
        from kcross.views.lines import print_json

        print_runs_json([run])
        print_json([checked.as_json()])
    else:
        render.print_run(out, run.stream.results, run.stream.fingerprint or {},
                         title=f"{args.arch}: instructions per operation (counting mode, "
                         f"{run.guest.cpu_model}, {describe_kernel(kernel)})", unit=UNIT)
        out.print(crosscheck_table(checked, f"{args.arch}: the kernel's own selftests beside "
                                            "kcross (same boot, instructions per op)"))
    store_runs(args, [run], err)
    return max(exit_status([run]), EXIT_CHECK_FAILED if failed else EXIT_OK)
