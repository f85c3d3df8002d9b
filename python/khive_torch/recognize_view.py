"""A tensor read through layout ops as a strided view of a stored one (issue 24): what recognize.py records as an
elementwise input's view (khive.op.views) and a copy stage's sizes (khive.op.shape).

    v = view_of(node)          # node: an fx node reached from a placeholder through transposes, views, expands, ...
    v.placeholder              # the stored tensor
    v.spec(out_rank)           # {"shape": [...], "strides": [...], "offset": "..."}: axis expressions of in0..
                               # (the stored tensor's axes) and out0.. (the result's), or None

The layout ops (transpose / permute / t, view / reshape / flatten / unflatten, unsqueeze / squeeze, expand, slice and
select with step 1, split / chunk picks, contiguous / clone / copies) are replayed on symbols: every axis of the
result is a list of pieces (row-major), each a size and a stride, polynomials of the stored tensor's sizes (in<k>);
a reshape regroups the pieces (a merge never copies: the pieces stay apart, so a transpose then a merge, or an expand
then a merge (repeat_kv), is still one view), splitting one where an axis ends inside it. A size the trace only knows
as a number (a piece split off, an expanded axis) is an unknown until the result's axes name it (out<d>) or the
split it came from does (the piece's whole size over the other part); one that stays unknown is written as the number
it was where the reference was traced.

The result reads the stored tensor's element offset + sum c_j * stride_j, c the coordinates of the result's flat
index in the pieces' sizes: what the elementwise templates' views compute (tuner/bind/elementwise.cpp). The binder
checks it on every workload (sizes multiply to the output's, every element inside the input), and the guard judges
the kernel.
"""
import sys

from .recognize import _name, _shape   # an fx target's op name; a node's traced shape

# Layout ops replayed here; every other op ends the walk back from a value.
COPIES = {"clone", "contiguous", "detach", "alias", "lift_fresh_copy", "_to_copy", "copy", "lift", "type_as"}
RESHAPES = {"view", "_unsafe_view", "reshape", "_reshape_alias", "view_as", "flatten", "unflatten"}
VIEW_OPS = COPIES | RESHAPES | {"t", "transpose", "permute", "unsqueeze", "squeeze", "unsqueeze_", "squeeze_",
                                "expand", "expand_as", "slice", "select", "getitem"}


class Poly:
    """A polynomial with integer coefficients over atoms (in0, out1, unknowns "?3", solved "(out1 // in1)"):
    {tuple of sorted atoms: coefficient}."""

    def __init__(self, terms=None):
        self.t = {k: v for k, v in (terms or {}).items() if v}

    @staticmethod
    def of(x):
        if isinstance(x, Poly):
            return x
        if isinstance(x, int):
            return Poly({(): x})
        return Poly({(x,): 1})

    def __add__(self, o):
        o, t = Poly.of(o), dict(self.t)
        for k, v in o.t.items():
            t[k] = t.get(k, 0) + v
        return Poly(t)

    def __sub__(self, o):
        return self + Poly.of(o) * -1

    def __mul__(self, o):
        o, t = Poly.of(o), {}
        for a, x in self.t.items():
            for b, y in o.t.items():
                k = tuple(sorted(a + b))
                t[k] = t.get(k, 0) + x * y
        return Poly(t)

    def __eq__(self, o):
        return isinstance(o, Poly) and self.t == o.t

    def __hash__(self):
        return hash(tuple(sorted(self.t.items())))

    def atoms(self):
        return {a for k in self.t for a in k}

    def subst(self, m):
        """The polynomial with atoms replaced ({atom: Poly})."""
        out = Poly()
        for k, v in self.t.items():
            term = Poly.of(v)
            for a in k:
                term = term * (m[a] if a in m else Poly.of(a))
            out = out + term
        return out

    def one_atom(self):
        """The atom when the polynomial is exactly one atom, else None."""
        if len(self.t) == 1:
            (k, v), = self.t.items()
            if v == 1 and len(k) == 1:
                return k[0]
        return None

    def text(self):
        if not self.t:
            return "0"
        parts = []
        for k, v in sorted(self.t.items(), key=lambda kv: (-len(kv[0]), kv[0])):
            factors = list(k)
            if abs(v) != 1 or not factors:
                factors = [str(abs(v))] + factors
            term = " * ".join(factors)
            parts.append(("- " if v < 0 else "+ ") + term)
        s = " ".join(parts)
        return s[2:] if s.startswith("+ ") else "0 " + s


class View:
    """A tensor as a strided view of `placeholder`: axes (lists of pieces [size Poly, stride Poly, size value]),
    offset (Poly); unknowns {atom: value} and splits [(whole Poly, [part Polys])] to name them by."""

    def __init__(self, placeholder, shape):
        self.placeholder = placeholder
        self.axes, stride = [], Poly.of(1)
        for k in reversed(range(len(shape))):
            size = Poly.of(f"in{k}")
            self.axes.insert(0, [[size, stride, shape[k]]])
            stride = stride * size
        self.offset = Poly()
        self.unknowns, self.splits, self.values = {}, [], {f"in{k}": v for k, v in enumerate(shape)}

    def _unknown(self, value):
        a = f"?{len(self.unknowns)}"
        self.unknowns[a] = value
        self.values[a] = value
        return Poly.of(a)

    def sizes(self):
        out = []
        for ax in self.axes:
            v = 1
            for p in ax:
                v *= p[2]
            out.append(v)
        return out

    # -- the ops ------------------------------------------------------------------------------------------------
    def permute(self, dims):
        r = len(self.axes)
        dims = [d % r for d in dims]
        if sorted(dims) != list(range(r)):
            return False
        self.axes = [self.axes[d] for d in dims]
        return True

    def unsqueeze(self, d):
        self.axes.insert(d % (len(self.axes) + 1), [])
        return True

    def squeeze(self, dims):
        r = len(self.axes)
        sizes = self.sizes()
        drop = {d % r for d in dims} if dims is not None else set(range(r))
        drop = {d for d in drop if sizes[d] == 1}
        for d in drop:   # a size-1 axis keeps no piece of size > 1; a symbolic 1 (a var axis at 1) is dropped too
            if any(p[2] != 1 for p in self.axes[d]):
                return False
        self.axes = [a for d, a in enumerate(self.axes) if d not in drop]
        return True

    def expand(self, shape):
        r = len(self.axes)
        if len(shape) < r:
            return False
        new = [[] for _ in range(len(shape) - r)] + self.axes
        sizes = [1] * (len(shape) - r) + self.sizes()
        for d, (have, want) in enumerate(zip(sizes, shape)):
            if have == want:
                continue
            if have != 1:
                return False
            new[d] = [[self._unknown(want), Poly(), want]]
        self.axes = new
        return True

    def reshape(self, shape):
        pieces = [p for ax in self.axes for p in ax]
        new, i = [], 0
        for want in shape:
            ax, have = [], 1
            if want == 1:
                # a size-1 axis takes the size-1 pieces before the next one of size > 1 (a var axis traced at 1)
                while i < len(pieces) and pieces[i][2] == 1:
                    ax.append(pieces[i])
                    i += 1
                new.append(ax)
                continue
            while have < want:
                if i >= len(pieces):
                    return False
                size, stride, v = pieces[i]
                if want % (have * v) == 0:
                    ax.append(pieces[i])
                    have *= v
                    i += 1
                    continue
                need = want // have
                if want % have or v % need:
                    return False
                # the piece split: its outer `need` here, the rest (v / need) the next axis'
                outer, inner = self._unknown(need), self._unknown(v // need)
                self.splits.append((size, [outer, inner]))
                ax.append([outer, stride * inner, need])
                pieces[i] = [inner, stride, v // need]
                have = want
            # size-1 pieces after it stay with it unless a size-1 axis comes next (which takes them)
            while i < len(pieces) and pieces[i][2] == 1 and not (len(new) + 1 < len(shape) and shape[len(new) + 1] == 1):
                ax.append(pieces[i])
                i += 1
            new.append(ax)
        if i != len(pieces) and any(p[2] != 1 for p in pieces[i:]):
            return False
        if i < len(pieces) and new:
            new[-1].extend(pieces[i:])
        self.axes = new
        return True

    def slice(self, dim, start, end, step):
        r = len(self.axes)
        dim %= r
        v = self.sizes()[dim]
        ax = [p for p in self.axes[dim]]
        if step != 1:
            return False
        if start is None:
            start = 0
        if end is None or end >= v or end == sys.maxsize:
            end = v
        if start == 0 and end == v:
            return True
        big = [p for p in ax if p[2] != 1]
        if len(big) != 1:
            return False
        size, stride, _ = big[0]
        s = Poly.of(start) if start >= 0 else size + start
        e = Poly.of(end) if 0 <= end < v else size if end >= v else size + end
        s_v, e_v = start % v if start < 0 else min(start, v), end % v if end < 0 else min(end, v)
        if e_v <= s_v:
            return False
        self.offset = self.offset + s * stride
        n = e - s
        if not n.atoms():
            n = Poly.of(e_v - s_v)
        self.axes[dim] = [[n, stride, e_v - s_v]]
        return True

    def select(self, dim, index):
        r = len(self.axes)
        dim %= r
        v = self.sizes()[dim]
        big = [p for p in self.axes[dim] if p[2] != 1]
        if len(big) > 1:
            return False
        if big:
            size, stride, _ = big[0]
            at = Poly.of(index) if index >= 0 else size + index
            self.offset = self.offset + at * stride
        elif not -v <= index < v:
            return False
        del self.axes[dim]
        return True

    def piece(self, dim, count):
        """The value as one of `count` equal parts of a cat along dim, read for every element of the cat's result:
        axis dim gains an outer piece of `count` of stride 0 (each part reads its own element at every part's place;
        which part's value counts is the stage's khive_piece)."""
        self.axes[dim % len(self.axes)].insert(0, [Poly.of(count), Poly(), count])
        return True

    # -- the result ---------------------------------------------------------------------------------------------
    def resolve(self, out_rank):
        """The unknowns named: an axis of one piece is out<d>; one unknown among an axis' pieces is out<d> over the
        others; one unknown part of a split is the whole over the other parts; the rest the numbers they were.
        Returns {atom: Poly}."""
        named = {}
        names_out = len(self.axes) == out_rank

        def known(p):
            return not any(a in self.unknowns and a not in named for a in p.atoms())
        progress = True
        while progress:
            progress = False
            if names_out:
                for d, ax in enumerate(self.axes):
                    unknown = [p for p in ax if not known(p[0]) and p[0].one_atom() is not None]
                    if len(unknown) == 1 and all(known(p[0]) for p in ax if p is not unknown[0]):
                        others = Poly.of(1)
                        for p in ax:
                            if p is not unknown[0]:
                                others = others * p[0].subst(named)
                        a = unknown[0][0].one_atom()
                        named[a] = (Poly.of(f"out{d}") if others == Poly.of(1)
                                    else Poly.of(f"(out{d} // ({others.text()}))"))
                        progress = True
            for whole, parts in self.splits:
                unknown = [p for p in parts if not known(p)]
                if len(unknown) == 1 and known(whole) and unknown[0].one_atom() is not None:
                    others = Poly.of(1)
                    for p in parts:
                        if p is not unknown[0]:
                            others = others * p.subst(named)
                    named[unknown[0].one_atom()] = Poly.of(f"(({whole.subst(named).text()}) // ({others.text()}))")
                    progress = True
        for a, v in self.unknowns.items():
            if a not in named:
                named[a] = Poly.of(v)
        return named

    def spec(self, out_shape=None):
        """{"shape", "strides", "offset"} of the view against a result of out_shape (default its own sizes; a smaller
        rank or size-1 axes are broadcast by torch's rule), the pieces of size 1 dropped and neighbours that are one
        run merged; None when the sizes do not line up with out_shape."""
        sizes = self.sizes()
        if out_shape is not None and tuple(out_shape) != tuple(sizes):
            if len(out_shape) < len(sizes) or not self.expand(list(out_shape)):
                return None
        named = self.resolve(len(self.axes))
        shape, strides, values = [], [], []
        for d, ax in enumerate(self.axes):
            for j, (size, stride, v) in enumerate(ax):
                size = Poly.of(f"out{d}") if len([p for p in ax if p[2] != 1 or p[0] != Poly.of(1)]) == 1 else \
                    size.subst(named)
                if size == Poly.of(1):
                    continue
                shape.append(size)
                strides.append(stride.subst(named))
                values.append(v)
        # merge neighbours that are one run (stride_a == size_b * stride_b) or both broadcast
        i = len(shape) - 1
        while i > 0:
            a, b = i - 1, i
            if strides[a] == shape[b] * strides[b] or (strides[a] == Poly() and strides[b] == Poly()):
                shape[a], strides[a], values[a] = shape[a] * shape[b], strides[b], values[a] * values[b]
                del shape[b], strides[b], values[b]
            i -= 1
        if not shape:
            shape, strides = [Poly.of(1)], [Poly()]
        return {"shape": [s.text() for s in shape], "strides": [s.text() for s in strides],
                "offset": self.offset.subst(named).text()}

    def sizes_text(self):
        """The result's sizes as axis expressions of in0.. (a copy stage's intermediate: khive.op.shape)."""
        named = self.resolve(-1)
        out = []
        for ax in self.axes:
            s = Poly.of(1)
            for p in ax:
                s = s * p[0].subst(named)
            out.append(s.text())
        return out


def view_of(node, stop=None):
    """The View of node: the layout ops from a placeholder (or `stop`, a node taken as stored) to node replayed, or
    None when one is not a strided view (a step, a copy that reorders elements in a way no view does)."""
    chain = []
    n = node
    while not (getattr(n, "op", None) == "placeholder" or n is stop):
        if getattr(n, "op", None) != "call_function" or _name(n.target) not in VIEW_OPS or not n.args:
            return None
        chain.append(n)
        n = n.args[0]
        if _name(chain[-1].target) == "getitem":   # a pick of split / chunk / unbind: the split's input
            if getattr(n, "op", None) != "call_function" or _name(n.target) not in ("split", "split_with_sizes",
                                                                                   "unbind"):
                return None
            chain.append(n)
            n = n.args[0] if n.args else None
    shape = _shape(n)
    if shape is None:
        return None
    v = View(n, shape)
    chain.reverse()
    for c in chain:
        if _name(c.target) in ("split", "split_with_sizes", "unbind"):
            continue   # read with its getitem
        if not apply_op(v, c):
            return None
    return v


def apply_op(v, c):
    """Replays the layout op c (an fx node; a getitem picks from the split or unbind that is its argument) on View v;
    False when it is not a strided view or the sizes do not come out as c's."""
    name, a = _name(c.target), c.args
    if name == "getitem":
        sp = a[0]
        if getattr(sp, "op", None) != "call_function" or _name(sp.target) not in ("split", "split_with_sizes", "unbind"):
            return False
        dim = (sp.args[2] if len(sp.args) > 2 else sp.kwargs.get("dim", 0)) if _name(sp.target) != "unbind" else \
            (sp.args[1] if len(sp.args) > 1 else sp.kwargs.get("dim", 0))
        k = a[1]
        if _name(sp.target) == "unbind":
            ok = v.select(dim, k)
        else:
            total = v.sizes()[dim % len(v.axes)]
            sizes = sp.args[1]
            sizes = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes] * -(-total // sizes)
            start = sum(sizes[:k])
            ok = v.slice(dim, start, min(start + sizes[k], total), 1)
    elif name in COPIES:
        ok = True
    elif name == "t":
        ok = v.permute([1, 0]) if len(v.axes) == 2 else True
    elif name == "transpose":
        r = len(v.axes)
        d0, d1 = a[1] % r, a[2] % r
        dims = list(range(r))
        dims[d0], dims[d1] = d1, d0
        ok = v.permute(dims)
    elif name == "permute":
        ok = v.permute(list(a[1]))
    elif name in ("unsqueeze", "unsqueeze_"):
        ok = v.unsqueeze(a[1])
    elif name in ("squeeze", "squeeze_"):
        dims = a[1] if len(a) > 1 else None
        ok = v.squeeze(None if dims is None else list(dims) if isinstance(dims, (list, tuple)) else [dims])
    elif name in ("expand", "expand_as"):
        ok = v.expand(list(_shape(c)))
    elif name in RESHAPES:
        ok = v.reshape(list(_shape(c)))
    elif name == "slice":
        dim = a[1] if len(a) > 1 else 0
        start = a[2] if len(a) > 2 else None
        end = a[3] if len(a) > 3 else None
        step = a[4] if len(a) > 4 else 1
        ok = all(isinstance(x, int) or x is None for x in (start, end, step)) and v.slice(dim, start, end, step)
    elif name == "select":
        ok = isinstance(a[2], int) and v.select(a[1], a[2])
    else:
        ok = False
    return bool(ok) and tuple(v.sizes()) == tuple(_shape(c) or ())


def _value(p, values):
    total = 0
    for k, c in p.t.items():
        term = c
        for a in k:
            term *= values[a]
        total += term
    return total


def indices(v, torch):
    """The flat index of the stored element that each element of the view reads where it was traced: an int64
    tensor of the view's sizes (exact, for comparing a reading with what torch computes)."""
    sizes, strides = [], []
    for ax in v.axes:
        for _size, stride, n in ax:
            sizes.append(n)
            strides.append(_value(stride, v.values))
    total = 1
    for n in _shape(v.placeholder):
        total *= n
    base = torch.arange(max(total, 1), dtype=torch.int64)
    return torch.as_strided(base, sizes, strides, _value(v.offset, v.values)).reshape(v.sizes())


def is_plain(v):
    """Whether the view reads its stored tensor row-major at the result's flat index where it was traced (no offset,
    each piece's stride the product of the sizes after it): no view needed."""
    values = dict(v.values)
    if _value(v.offset, values):
        return False
    step = 1
    for ax in reversed(v.axes):
        for size, stride, n in reversed(ax):
            if n != 1 and _value(stride, values) != step:
                return False
            step *= n
    return True
