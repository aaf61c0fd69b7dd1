"""Every gradient formula of minitorch.linalg, in one place (PyTorch keeps them in
derivatives.yaml / FunctionsManual.cpp). Each factorization is one autograd Function: its
forward calls a kernel (_kernels.py), its backward is the formula, written with minitorch
ops. Real matrices only; ``X^T`` is ``X.mT``, ``A^{-1} B`` is a solve, never an inverse.

The other ops of minitorch.linalg (inv is a Solve with B = I; pinv, lstsq, matrix norms
and cond go through SVD; vector norms are minitorch.norm) are compositions of these and of
ordinary ops, so their gradients follow.
"""
from __future__ import annotations

from .. import _C
from ..autograd import Function
from . import _kernels


def _solve_no_grad(a, b):
    """A^{-1} B (no checks: the matrices were invertible in forward)."""
    x, _info = _kernels.run("solve", a, b=b)
    return x


def _eye_like(a, n):
    return _C._eye(n, n, a.dtype, a.device)


def _zeros_like(t):
    return t.new_zeros(tuple(t.shape))


class Solve(Function):
    """X = A^{-1} B, for A (..., n, n) and B (..., n, k) with the same batch dims.

    gB = A^{-T} gX;  gA = -gB X^T."""

    @staticmethod
    def forward(ctx, a, b):
        x, _info = _kernels.run("solve", a, b=b)
        ctx.save_for_backward(a, x)
        return x

    # derivative of linalg.solve, input A: -A^{-T} g X^T
    # derivative of linalg.solve, input B: A^{-T} g
    @staticmethod
    def backward(ctx, gx):
        a, x = ctx.saved_tensors
        gb = _solve_no_grad(a.mT, gx)
        ga = -(gb @ x.mT) if ctx.needs_input_grad[0] else None
        return ga, gb


def _lu_diagonal(a):
    """U's diagonal of P A = L U, and (-1)^(row swaps) (no gradient)."""
    lu, piv, _info = _kernels.run("lu_factor", a)
    n = a.shape[-1]
    swaps = (piv != _C._arange(1, n + 1, 1, _C.dtype.int64, piv.device)).sum(-1)  # pivots are 1-based
    diag = lu.diagonal(0, -2, -1)
    if n and a.is_cuda:
        # cuSOLVER's getrf can leave a matrix holding NaN with a finite U (det [[1, nan], [2, 3]]
        # came out 3 on an H200); LAPACK carries the NaN through, as PyTorch does.
        has_nan = a.isnan().any(-1).any(-1)
        diag = _C.where(has_nan[..., None], _C._full((), float("nan"), diag.dtype, diag.device), diag)
    return diag, 1.0 - 2.0 * (swaps % 2).to(a.dtype)


def _slogdet_values(a):
    """(sign, log|det A|) from P A = L U (no gradient)."""
    diag, parity = _lu_diagonal(a)
    sign = parity * diag.sign().cumprod(-1)[..., -1] if diag.shape[-1] else parity
    return sign, diag.abs().log().sum(-1)


def _det_value(a):
    """det A = (-1)^(row swaps) * prod(diag U) (no gradient)."""
    diag, parity = _lu_diagonal(a)
    return parity * diag.cumprod(-1)[..., -1] if diag.shape[-1] else parity


class SlogDet(Function):
    """(sign, log|det A|) from the LU factorization P A = L U: |det A| is the product of
    U's diagonal, its sign that of the diagonal times (-1)^(row swaps).

    g(logabsdet) -> gA = g A^{-T}  (sign is piecewise constant: no gradient)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _slogdet_values(a)

    # derivative of linalg.slogdet, input A: g_logabsdet * A^{-T} (sign: none)
    @staticmethod
    def backward(ctx, gsign, glogabs):
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        inv_t = _solve_no_grad(a.mT, _eye_like(a, n).expand(*a.shape).contiguous())
        return glogabs[..., None, None] * inv_t


class Det(Function):
    """det A = (-1)^(row swaps) * prod(diag U), from P A = L U.

    gA = g * cofactor(A), the matrix of cofactors, which exists for singular A too; from the
    SVD A = U S V^T: cofactor(A) = det(U) det(V^T) U diag(prod_{j != i} s_j) V^T."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _det_value(a)

    # derivative of linalg.det, input A: g * det(U) det(V^T) U diag(prod_{j != i} s_j) V^T (= g det(A) A^{-T})
    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        if n == 0:
            return _zeros_like(a)
        u, s, vh, _info = _kernels.run("svd", a, False, True)
        su, sv = _slogdet_values(u)[0], _slogdet_values(vh)[0]
        eye = _eye_like(a, n).to(_C.dtype.bool)
        # row i of `others` is s with s_i replaced by 1: its product is prod_{j != i} s_j
        others = _C.where(eye, _C._full((), 1.0, a.dtype, a.device), s[..., None, :].expand(*s.shape, n))
        prods = others.cumprod(-1)[..., -1]
        cof = (u * prods[..., None, :]) @ vh
        return (g * su * sv)[..., None, None] * cof


class Cholesky(Function):
    """A = L L^T, L lower-triangular (LAPACK potrf reads A's lower triangle).

    gA = sym(L^{-T} Phi(L^T gL) L^{-1}), Phi: the lower triangle with its diagonal halved,
    sym(X) = (X + X^T) / 2 (the gradient of a function of a symmetric matrix)."""

    @staticmethod
    def forward(ctx, a):
        l, _info = _kernels.run("cholesky", a)
        ctx.save_for_backward(l)
        return l

    # derivative of linalg.cholesky, input A: sym(L^{-T} Phi(L^T g) L^{-1}), Phi = tril with halved diagonal
    @staticmethod
    def backward(ctx, gl):
        (l,) = ctx.saved_tensors
        phi = (l.mT @ gl).tril()
        phi = phi - 0.5 * phi.diagonal(0, -2, -1).diag_embed()
        y = _solve_no_grad(l.mT, phi)                 # L^{-T} Phi
        ga = _solve_no_grad(l.mT, y.mT).mT            # (L^{-T} Phi) L^{-1}
        return 0.5 * (ga + ga.mT)


def _qr_backward_tall(q, r, gq, gr):
    """A = Q R with m >= n (Q m x n, R n x n):
    M = R gR^T - gQ^T Q;  gA = (gQ + Q copyltu(M)) R^{-T}, copyltu(M) = tril(M) + tril(M, -1)^T."""
    m = r @ gr.mT - gq.mT @ q
    copyltu = m.tril() + m.tril(-1).mT
    b = gq + q @ copyltu
    return _solve_no_grad(r, b.mT).mT                 # b R^{-T} = (R^{-1} b^T)^T


class QR(Function):
    """A = Q R (geqrf + orgqr), mode 'reduced' or 'complete'.

    m >= n: _qr_backward_tall. m < n: A = [X | Y], R = [U | V] with X = Q U square, Y = Q V:
    gY = Q gV, gX = _qr_backward_tall(Q, U, gQ + Y gV^T, gU). 'complete' with m > n has no
    gradient (Q's extra columns are not determined by A), as in PyTorch."""

    @staticmethod
    def forward(ctx, a, complete):
        q, r = _kernels.run("qr", a, complete)
        ctx.save_for_backward(a, q, r)
        ctx.complete = complete
        return q, r

    # derivative of linalg.qr, input A: (gQ + Q copyltu(R gR^T - gQ^T Q)) R^{-T} (m >= n; m < n: see QR)
    @staticmethod
    def backward(ctx, gq, gr):
        a, q, r = ctx.saved_tensors
        m, n = a.shape[-2], a.shape[-1]
        if ctx.complete and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        gq = _zeros_like(q) if gq is None else gq
        gr = _zeros_like(r) if gr is None else gr
        if m >= n:
            return _qr_backward_tall(q, r, gq, gr), None
        y, u, gu, gv = a[..., :, m:], r[..., :, :m], gr[..., :, :m], gr[..., :, m:]
        gx = _qr_backward_tall(q, u, gq + y @ gv.mT, gu)
        return _C._cat([gx, q @ gv], -1), None


class Eigh(Function):
    """A = V diag(w) V^T for symmetric A (syevd; reads one triangle).

    gA = V (diag(gw) + (V^T gV) / E) V^T, E_ij = w_j - w_i off the diagonal (the division
    leaves the diagonal out). Repeated eigenvalues make it infinite, as in PyTorch."""

    @staticmethod
    def forward(ctx, a, upper):
        w, v, _info = _kernels.run("eigh", a, upper, True)
        ctx.save_for_backward(w, v)
        return w, v

    # derivative of linalg.eigh, input A: V (diag(gw) + (V^T gV) / (w_j - w_i)) V^T
    @staticmethod
    def backward(ctx, gw, gv):
        w, v = ctx.saved_tensors
        n = w.shape[-1]
        inner = _zeros_like(v) if gw is None else gw.diag_embed()
        if gv is not None:
            eye = _eye_like(w, n).to(_C.dtype.bool)
            e = w[..., None, :] - w[..., :, None]
            e = _C.where(eye, _C._full((), 1.0, w.dtype, w.device), e)
            off = _C.where(eye, _C._full((), 0.0, w.dtype, w.device), (v.mT @ gv) / e)
            inner = inner + off
        return v @ inner @ v.mT, None


class SVD(Function):
    """A = U diag(S) V^T (gesdd), S descending. With k = min(m, n), and E_ij = s_j^2 - s_i^2
    (1 on the diagonal), skew(X) = X - X^T, V = Vh^T:

    gA = U [ (skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS) ] V^T
         + (I - U U^T) gU S^{-1} V^T + U S^{-1} gV^T (I - V V^T)

    U and V are each only determined up to the signs of their columns: the formula is the
    gradient of functions that do not depend on that choice (PyTorch's condition too).
    With full_matrices=True only the first k columns of U and rows of Vh take part."""

    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh, _info = _kernels.run("svd", a, full_matrices, True)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    # derivative of linalg.svd, input A: U [skew(U^T gU)/E S + S skew(V^T gV)/E + diag(gS)] V^T + (I-UU^T) gU S^-1 V^T + U S^-1 gV^T (I-VV^T)
    @staticmethod
    def backward(ctx, gu, gs, gvh):
        u, s, vh = ctx.saved_tensors
        k = s.shape[-1]
        u, vh = u[..., :, :k], vh[..., :k, :]
        m, n = u.shape[-2], vh.shape[-1]
        inner = _zeros_like(s).diag_embed() if gs is None else gs.diag_embed()
        if gu is None and gvh is None:
            return u @ inner @ vh, None
        eye = _eye_like(s, k).to(_C.dtype.bool)
        s2 = s * s
        e = _C.where(eye, _C._full((), 1.0, s.dtype, s.device), s2[..., None, :] - s2[..., :, None])
        ga = None
        if gu is not None:
            gu = gu[..., :, :k]
            utgu = u.mT @ gu
            inner = inner + ((utgu - utgu.mT) / e) * s[..., None, :]
            if m > k:
                ga = ((gu - u @ utgu) / s[..., None, :]) @ vh
        if gvh is not None:
            gvh = gvh[..., :k, :]
            vtgv = vh @ gvh.mT
            inner = inner + s[..., :, None] * ((vtgv - vtgv.mT) / e)
            if n > k:
                extra = u @ ((gvh - (gvh @ vh.mT) @ vh) / s[..., :, None])
                ga = extra if ga is None else ga + extra
        main = u @ inner @ vh
        return (main if ga is None else main + ga), None
