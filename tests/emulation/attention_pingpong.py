# Run: python3 tests/emulation/attention_pingpong.py (a few seconds). kernels/attention/cuda_sm90.cu.in, PINGPONG 1.
# Warpgroup-level model of khive_fa3_fwd's K/V rings and the ping-pong's turns under random interleavings: one producer
# thread (TMA loads that land at a random later time), two consumer warpgroups (wgmma batches that read shared memory
# at a random time before the wait that retires them), PTX mbarrier phases and parities, and the two named barriers
# (bar.sync of the owner's 128 threads + bar.arrive of the other's 128). For OVERLAP 0 and 1, PINGPONG 0 and 1, STAGES
# 1-4, the grid kernel (one item) and the persistent one (items of 0-4 tiles whose ring positions carry over), it fails
# on a deadlock, on a wgmma that reads a stage holding another tile than its own (a release too early or a load into a
# stage still in use), on a warpgroup arriving twice at one barrier generation, and (PINGPONG 1) on turns that do not
# strictly alternate starting with warpgroup 0. Planted mistakes (no initial pass, the pass given back to oneself, a V
# stage released before its P·V wgmma retired) must fail: the checks are shown to catch them.
import random
import sys


class MBarrier:
    """An mbarrier: `expected` arrivals complete a phase; wait(P) passes once the phase of parity P has completed."""

    def __init__(self, expected):
        self.expected, self.arrived, self.phases = expected, 0, 0

    def arrive(self, n=1):
        self.arrived += n
        assert self.arrived <= self.expected, "more arrivals than the barrier's count in one phase"
        if self.arrived == self.expected:
            self.arrived, self.phases = 0, self.phases + 1

    def passes(self, parity):
        return (self.phases & 1) != parity


class NamedBarrier:
    """bar.sync / bar.arrive with 256 threads: a warpgroup counts 128."""

    def __init__(self):
        self.arrivals, self.generation, self.waiting = [], 0, []

    def arrive(self, wg, sync):
        assert wg not in self.arrivals, f"warpgroup {wg} arrives twice at one generation of a named barrier"
        self.arrivals.append(wg)
        gen = self.generation
        if len(self.arrivals) == 2:
            self.arrivals, self.generation = [], self.generation + 1
        return gen  # a sync waits until the generation moves past this one


def simulate(overlap, pingpong, stages, items, seed, plant=None):
    rng = random.Random(seed)
    k_full = [MBarrier(1) for _ in range(stages)]
    v_full = [MBarrier(1) for _ in range(stages)]
    k_empty = [MBarrier(8) for _ in range(stages)]  # one arrival per consumer warp (2 x 4)
    v_empty = [MBarrier(8) for _ in range(stages)]
    smem = {("K", s): None for s in range(stages)} | {("V", s): None for s in range(stages)}
    turns = [NamedBarrier(), NamedBarrier()]
    turn_log = []
    landings = []  # TMA copies in flight: (tensor, stage, tile)
    wgmma = [[], []]  # per warpgroup: committed batches, oldest first: [reads not yet done]

    def ring(x):
        return x % stages, (x // stages) & 1

    def producer():
        x = 0
        for it_count in items:
            for it in range(it_count):
                s, par = ring(x + it)
                tile = (x + it)
                while not k_empty[s].passes(par ^ 1):
                    yield
                landings.append(("K", s, tile))
                while not v_empty[s].passes(par ^ 1):
                    yield
                landings.append(("V", s, tile))
            x += it_count

    def consumer(wg):
        x = 0

        def wait(bar, par):
            while not bar.passes(par):
                yield

        def turn_begin():
            if pingpong:
                b = turns[wg]
                gen = b.arrive(wg, sync=True)
                while b.generation == gen:
                    yield
                turn_log.append(wg)  # the turn is this warpgroup's from here until its pass

        def turn_end():
            if pingpong:
                other = wg if plant == "pass_to_self" else 1 - wg
                turns[other].arrive(wg, sync=False)
            if False:
                yield

        def issue(reads):
            wgmma[wg].append(list(reads))

        def wait_batches(keep):
            while len(wgmma[wg]) > keep:  # retire the oldest: its reads happen now at the latest
                for r in wgmma[wg].pop(0):
                    check(r)
                yield

        def check(r):
            name, s, tile = r
            assert smem[(name, s)] == tile, f"wg {wg} reads {name} stage {s}: tile {smem[(name, s)]}, wants {tile}"

        def release(bar):
            bar.arrive(4)

        if pingpong and wg == 1 and plant != "no_first_pass":
            turns[0].arrive(1, sync=False)
        for n in items:
            if n == 0:
                continue
            kr = lambda it: ("K", ring(x + it)[0], x + it)
            vr = lambda it: ("V", ring(x + it)[0], x + it)
            kw = lambda it: wait(k_full[ring(x + it)[0]], ring(x + it)[1])
            vw = lambda it: wait(v_full[ring(x + it)[0]], ring(x + it)[1])
            if not overlap:
                for it in range(n):
                    yield from kw(it)
                    yield from turn_begin()
                    issue([kr(it)])
                    yield from turn_end()
                    yield from wait_batches(0)
                    release(k_empty[ring(x + it)[0]])
                    yield  # softmax
                    yield from vw(it)
                    yield from turn_begin()
                    issue([vr(it)])
                    yield from turn_end()
                    yield from wait_batches(0)
                    release(v_empty[ring(x + it)[0]])
            else:
                yield from kw(0)
                yield from turn_begin()
                issue([kr(0)])
                yield from turn_end()
                yield from wait_batches(0)
                release(k_empty[ring(x)[0]])
                yield  # softmax
                for it in range(1, n):
                    yield from kw(it)
                    yield from turn_begin()
                    issue([kr(it)])
                    yield from vw(it - 1)  # inside the turn, as the kernel does
                    issue([vr(it - 1)])
                    yield from turn_end()
                    if plant == "early_release":  # V's stage freed before the P·V wgmma that reads it retired
                        release(v_empty[ring(x + it - 1)[0]])
                    yield from wait_batches(1)
                    release(k_empty[ring(x + it)[0]])
                    yield  # softmax
                    yield from wait_batches(0)
                    if plant != "early_release":
                        release(v_empty[ring(x + it - 1)[0]])
                yield from vw(n - 1)
                yield from turn_begin()
                issue([vr(n - 1)])
                yield from turn_end()
                yield from wait_batches(0)
                release(v_empty[ring(x + n - 1)[0]])
            x += n

    procs = {"producer": producer(), 0: consumer(0), 1: consumer(1)}
    live = dict(procs)
    steps = 0
    while live or landings:
        steps += 1
        assert steps < 200000, "no progress"
        choices = list(live) + (["land"] if landings else []) + (["read"] if any(wgmma) else [])
        pick = rng.choice(choices)
        if pick == "land":  # a TMA copy lands: the stage holds the tile, the full barrier's phase completes
            name, s, tile = landings.pop(rng.randrange(len(landings)) if rng.random() < 0.3 else 0)
            smem[(name, s)] = tile
            (k_full if name == "K" else v_full)[s].arrive()
            continue
        if pick == "read":  # an in-flight wgmma reads its operands early
            wg = rng.choice([w for w in (0, 1) if wgmma[w]])
            batch = wgmma[wg][0]
            if batch:
                r = batch.pop(rng.randrange(len(batch)))
                assert smem[(r[0], r[1])] == r[2], f"wg {wg} early read of {r}: stage holds {smem[(r[0], r[1])]}"
            continue
        # Blocked processes yield again without changing anything; a deadlock is all of them blocked with nothing
        # in flight, which the step bound catches as "no progress".
        try:
            next(live[pick])
        except StopIteration:
            del live[pick]
    if pingpong:
        want = [i % 2 for i in range(len(turn_log))]
        assert turn_log == want, f"turns do not alternate: {turn_log[:12]}"
    return len(turn_log)


def main():
    cases = 0
    rng = random.Random(7)
    turns = 0
    for overlap in (0, 1):
        for pingpong in (0, 1):
            for stages in (1, 2, 3, 4):
                for trial in range(60):
                    items = [rng.randint(1, 6)] if trial < 20 else [rng.randint(0, 4) for _ in range(rng.randint(2, 6))]
                    turns += simulate(overlap, pingpong, stages, items, seed=rng.randrange(1 << 30))
                    cases += 1
    # The check can fail: without the second warpgroup's first pass nobody starts; passing the turn to oneself lets a
    # warpgroup run on alone.
    # A V stage released before its P·V retired must show as a wrong read in some interleaving.
    for plant in ("no_first_pass", "pass_to_self", "early_release"):
        caught = None
        for seed in range(200):
            try:
                simulate(1, 1, 1, [4, 3], seed=seed, plant=plant)
            except AssertionError as e:
                caught = str(e)
                break
        if caught is None:
            print(f"planted {plant}: NOT caught")
            return 1
        print(f"planted {plant}: fails as it should ({caught[:70]})")
    print(f"attention ping-pong: {cases} interleavings (OVERLAP 0/1, PINGPONG 0/1, STAGES 1-4, grid and persistent"
          f" items), {turns} turns: no deadlock, every wgmma read its own tile, turns alternate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
