"""The job of ``kcross lab ARCH --peers`` (the other jobs: kcross.lab.jobs; what they
share: kcross.lab.boots): the kernel's selftests' sources fetched before anything is built, then
one counting boot with the harness and the selftests, the run's table and the selftests'
beside it (kcross.lab.peers computes, kcross.views.peers shows)."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console

from kcross.errors import EXIT_CHECK_FAILED, EXIT_OK
from kcross.lab.boots import (
    count_boot,
    describe_kernel,
    exit_status,
    make_guest,
    print_runs_json,
    store_runs,
)
from kcross.lab.kernel import Kernel
from kcross.lab.linux_source import Source
from kcross.lab.payload import Payload
from kcross.lab.request import LabRequest
from kcross.lab.session import UNIT
from kcross.views.lines import print_json, say


def selftest_source(request: LabRequest, kernel: Kernel, err: Console) -> Source:
    """--peers' sources: Debian's linux-source of the kernel's version, from its release
    (fetched before anything is built, as the kernel is)."""
    from kcross.lab.linux_source import fetch_source
    from kcross.lab.selftests import WANTED

    return fetch_source(request.arch, kernel.version, WANTED, release=kernel.release,
                        say=lambda line: say(err, f"kcross lab: {line}"))


def with_peers(request: LabRequest, kernel: Kernel, payload: Payload, src: Source,
               out: Console, err: Console) -> int:
    """--peers: the kernel's own selftests after the harness in one counting boot,
    their figures beside kcross's rows (kcross.lab.peers)."""
    from kcross.lab.peers import peers_beside, suites_for
    from kcross.lab.selftests import build as build_selftests
    from kcross.lab.selftests import host_seconds, plan
    from kcross.views.peers import peers_table
    from kcross.views.run import print_run
    from kcross.views.table import terminal

    selection = request.peers
    assert selection is not None   # the job of --peers
    say(err, f"kcross lab: building the kernel's selftests for {request.arch} from "
             f"{src.package} {src.version} (static)...")
    built = build_selftests(request.arch, src)
    suites = request.guest.suites(suites_for(request.arch, selection))
    # The slow selftests add their host time to the boot's limit (--timeout).
    longer = replace(request, timeout=request.timeout + host_seconds(request.arch, selection))
    run = count_boot(longer, make_guest(request, kernel, "counting"), kernel, payload, None, err,
                     suites=suites, extra_plan=plan(request.arch, selection),
                     extra_files=built.files())
    checked = peers_beside(request.arch, run, src, selection)
    failed = any(not r.figures.passed for r in checked.rows)
    if request.json_output:
        print_runs_json([run])
        print_json([checked.as_json()])
    else:
        print_run(out, run.stream.results, run.stream.fingerprint or {},
                  title=f"{request.arch}: instructions per operation (counting mode, "
                        f"{run.guest.cpu_model}, {describe_kernel(kernel)})", unit=UNIT)
        out.print(terminal(peers_table(checked, f"{request.arch}: the kernel's own selftests "
                                                "beside kcross (same boot, instructions per op)")))
    store_runs(request, [run], err)
    return max(exit_status([run]), EXIT_CHECK_FAILED if failed else EXIT_OK)
