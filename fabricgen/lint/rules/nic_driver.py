"""What a host's NIC driver refuses: settings a script would apply and the kernel would answer with EINVAL."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import port_source


@rule("FG-SCH-004", "nic-ets-refused-by-driver", "error", "the NIC's ETS layout is one its driver accepts")
def nic_ets_refused_by_driver(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Some NIC drivers refuse an ETS traffic class at 0 % while the ETS shares add up to 100: Broadcom bnxt_en
    answers EINVAL ("rejecting ETS config starving a TC", ``bnxt_ets_validate`` in the Linux kernel's
    drivers/net/ethernet/broadcom/bnxt/bnxt_dcb.c), so the whole ETS set fails, and bnxt_en then refuses PFC too
    (it needs ETS first). mlx5 takes such a layout. Which drivers refuse it is the host platform's capability
    (``ets_zero_share``; `fabricgen platforms`).

    Fix: give the TC a share, or map no priority to it and make it strict with 0 % (what fabricgen renders)."""
    for host, nics in ctx.host_nics:
        if ctx.capability(host).ets_zero_share != "refused":
            continue
        for nic in nics:
            shares = [bw for tsa, bw in zip(nic.tsa, nic.tcbw, strict=True) if tsa == "ets"]
            starved = [tc for tc, (tsa, bw) in enumerate(zip(nic.tsa, nic.tcbw, strict=True))
                       if tsa == "ets" and bw == 0]
            if starved and sum(shares) == 100:
                yield r.finding(host.name, f"ETS TC {', '.join(map(str, starved))} at 0 % beside an ETS total of "
                                f"100: the {ctx.capability(host).name} NIC driver refuses the whole ETS setting",
                                "make those TCs strict with 0 % and map no priority to them, or give each a share",
                                port=nic.interface, source=port_source(host.name, nic.interface))
