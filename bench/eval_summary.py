#!/usr/bin/env python3
"""One line per evaluation and per workload of `khive eval --json` files: verdict, guard and wall seconds, phases, and
per workload the judge's median per call against the executor's own events (the ratio the gated clock must keep near 1)."""
import json,sys,statistics as st
for f in sys.argv[1:]:
    try: j=json.load(open(f))
    except Exception as e: print(f, "unreadable", e); continue
    c=j.get("candidate",{})
    print(f, "accepted", j.get("accepted"), "verdict", (j.get("verdict") or {}).get("reason"), (j.get("verdict") or {}).get("message","")[:300], "err", j.get("harness_error"))
    print("  seconds %.1f guard %.2f judge %.2f phases %s" % (j.get("seconds",0), c.get("guard_seconds",0) or 0, c.get("judge_seconds",0) or 0, {k: round(v,2) for k,v in (c.get("phases") or {}).items()}))
    for t in c.get("timing",[]):
        s=t.get("samples_s",[]); e=t.get("in_process_s",[])
        if s: print("  %-28s batch %3d n %4d judge %.2f us  events %.2f us  ratio %.3f" % (t["workload"], t.get("batch",0), len(s), 1e6*st.median(s), 1e6*st.median(e) if e else 0, st.median(s)/st.median(e) if e else 0))
    for a in j.get("ab") or []: print("  ab", a.get("workload"), "pairs", a.get("pairs"), "ratio %.4f"%a.get("ratio",0), "p_f %.3g p_s %.3g"%(a.get("p_faster",1),a.get("p_slower",1)), "faster", a.get("faster"))
    if j.get("ab_decision"): print("  decision", j.get("new_leader"), j.get("ab_decision"))
