"""``mcs rest check SPEC``: every problem of an OpenAPI spec, and what the REST driver does about each.

Exit codes: 0 the spec has no problem, 1 it has problems (listed on stdout), 2 it cannot be
read at all (one line on stderr), 3 prance or openapi-spec-validator is missing.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

EXIT_OK, EXIT_PROBLEMS = 0, 1


def _check(args: argparse.Namespace) -> int:
    from mcs_rest._check import check_spec
    from mcs_rest._spec import Spec, SpecRedirectRefused

    try:
        spec = Spec.load(args.spec, allow_external=bool(args.allow_external_refs),
                         redirect_hosts=args.spec_redirect_hosts or ())
    except SpecRedirectRefused as exc:
        raise exc.on_command_line() from None
    report = check_spec(spec, "skip" if args.skip_invalid_operations else "refuse")
    if args.json:
        print(json.dumps({
            "spec": report.location, "validator": report.validator, "operations": report.operations,
            "refused": report.refused, "problems": [asdict(p) for p in report.problems],
        }, indent=2, ensure_ascii=False))
    else:
        print(report.render())
    return EXIT_OK if report.ok else EXIT_PROBLEMS


def add_redirect_host_argument(parser: argparse.ArgumentParser) -> None:
    """``--spec-redirect-host HOST`` (repeatable), the driver's ``spec_redirect_hosts``."""
    parser.add_argument("--spec-redirect-host", action="append", dest="spec_redirect_hosts", metavar="HOST",
                        help="a host a spec URL may redirect to (repeatable; the same origin is always followed)")


def register_command(subparsers: Any) -> None:
    """Add ``mcs rest check`` to the CLI (entry point group ``mcs.commands``)."""
    rest = subparsers.add_parser("rest", help="REST driver tools (OpenAPI specs)")
    actions = rest.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check", help="validate a spec with prance (openapi-spec-validator); say what the driver does about each problem",
    )
    check.add_argument("spec", help="path or URL of the OpenAPI 3.x / Swagger 2.0 spec")
    check.add_argument("--allow-external-refs", action="store_true", help="follow $refs outside the spec's folder")
    add_redirect_host_argument(check)
    check.add_argument("--skip-invalid-operations", action="store_true",
                       help="judge as the driver with invalid_operations='skip' (operations it cannot build left out)")
    check.add_argument("--json", action="store_true", help="the report as JSON")
    check.set_defaults(handler=_check)
