"""Samplers that minitorch has no op for (Gamma, Poisson, Binomial), written with tensor
ops so they run on every device and draw from minitorch's generator (manual_seed makes
them reproducible), and the implicit reparameterization gradient of Gamma draws.

Rejection samplers draw a fresh proposal for every element each round and keep the first
accepted one, until all are accepted (a few rounds)."""
from __future__ import annotations

import minitorch


def _indices(mask):
    """Flat indices of the True elements of a 1-d mask, on its device (found on the host:
    the loops below read the mask there anyway, and nonzero is slow on the emulator)."""
    return mask.cpu().nonzero().reshape(-1).to(mask.device)


def _rejection(params, propose):
    """Runs ``propose(*params) -> (candidate, accepted)`` on flat parameter tensors, then
    again on the elements not accepted (compacted), until all are: each element gets the
    first candidate accepted for it."""
    candidate, accepted = propose(*params)
    rest = _indices(~accepted)
    if rest.numel():
        candidate[rest] = _rejection([p[rest] for p in params], propose)
    return candidate


def _flat(fn, *tensors):
    """Applies a sampler of flat tensors to same-shape tensors, keeping their shape."""
    shape = tensors[0].shape
    return fn(*(t.reshape(-1) for t in tensors)).reshape(shape)


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws (at least the dtype's smallest normal number); no gradient."""
    return standard_log_gamma(alpha).exp().clamp(min=minitorch.finfo(alpha.dtype).tiny)


def standard_log_gamma(alpha):
    """Logs of Gamma(alpha, 1) draws, by Marsaglia and Tsang's method, with the boost
    log X = log Y + log(U) / alpha (Y ~ Gamma(alpha + 1)) for alpha < 1, which keeps the
    tiny draws of small alphas (as logs); no gradient."""
    return _flat(_standard_log_gamma, alpha.detach())


def _standard_log_gamma(alpha):
    boost = alpha < 1
    a = minitorch.where(boost, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = (9.0 * d).rsqrt()
    tiny = minitorch.finfo(alpha.dtype).tiny

    def propose(d, c):
        z = minitorch.randn_like(d)
        u = minitorch.rand_like(d)
        v = (1 + c * z) ** 3
        log_v = v.clamp(min=tiny).log()
        accepted = (v > 0) & (u.log() < 0.5 * z * z + d - d * v + d * log_v)
        return d.log() + log_v, accepted

    log_x = _rejection([d, c], propose)
    boosted = _indices(boost)
    if boosted.numel():
        u = minitorch.rand_like(boosted, dtype=alpha.dtype).clamp(min=tiny)
        log_x[boosted] = log_x[boosted] + u.log() / alpha[boosted]
    return log_x


def standard_gamma_grad(x, alpha):
    """d x / d alpha of a Gamma(alpha, 1) draw x at fixed CDF value (implicit
    reparameterization), as torch._standard_gamma_grad."""
    return x * _log_gamma_grad(x.detach().double().log(), alpha).to(x.dtype)


def _log_gamma_grad(log_x, alpha):
    """d log x / d alpha of Gamma(alpha, 1) draws given by their logs (implicit
    reparameterization): -(dP(alpha, x)/d alpha) / (x density(x)), with the regularized
    incomplete gamma function P summed as its power series, in float64:

        P = x**alpha e**-x / Gamma(alpha + 1) * sum_n t_n,   t_n = prod_{k<=n} x / (alpha + k)

    which gives d log x / d alpha = -((log x - digamma(alpha + 1)) S - sum_n t_n H_n) / alpha
    with S = sum_n t_n and H_n = sum_{k<=n} 1 / (alpha + k). The series is summed until its
    terms are below 1e-17 of the sum, past the largest term (n > x - alpha); for x so small
    that it underflows, S = 1 and the sum of t_n H_n vanishes. The rounding error relative
    to the result is about 1e-16 / (1 - P), small for x drawn from the distribution."""
    log_x = log_x.detach().double()
    a = alpha.detach().double()
    shape = log_x.shape
    log_x, a = log_x.reshape(-1), a.reshape(-1)
    ones, zeros = minitorch.ones_like(log_x), minitorch.zeros_like(log_x)
    total, weighted = _gamma_series(log_x.exp(), a, 0, ones, ones, zeros, zeros)
    grad = -((log_x - minitorch.digamma(a + 1)) * total - weighted) / a
    return minitorch.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0).reshape(shape)


def _gamma_series(x, a, n, term, total, harmonic, weighted):
    """Sums S = sum_n t_n and W = sum_n t_n H_n of _log_gamma_grad from term n on, eight
    terms at a time, going on with the unconverged elements alone once they are fewer
    than half."""
    while True:
        for _ in range(8):
            n += 1
            term = term * x / (a + n)
            harmonic = harmonic + 1.0 / (a + n)
            total = total + term
            weighted = weighted + term * harmonic
        going = (x - a >= n) | (term * (1 + harmonic) > 1e-17 * total)
        active = _indices(going)
        if active.numel() == 0:
            return total, weighted
        if 2 * active.numel() < x.numel():
            total, weighted = total.clone(), weighted.clone()
            total[active], weighted[active] = _gamma_series(
                *(v[active] for v in (x, a)), n, *(v[active] for v in (term, total, harmonic, weighted)))
            return total, weighted


def log_gamma_rsample(alpha):
    """Logs of Gamma(alpha, 1) draws that carry d log x / d alpha (implicit
    reparameterization) when alpha requires grad; the value is exactly the draw's."""
    log_x = standard_log_gamma(alpha)
    if minitorch.is_grad_enabled() and alpha.requires_grad:
        grad = _log_gamma_grad(log_x, alpha).to(log_x.dtype)
        log_x = log_x + grad * (alpha - alpha.detach())
    return log_x


def gamma_rsample(alpha):
    """Gamma(alpha, 1) draws that carry d x / d alpha (implicit reparameterization) when
    alpha requires grad; the value is exactly the draw."""
    tiny = minitorch.finfo(alpha.dtype).tiny
    x = log_gamma_rsample(alpha).exp()
    return x + (x.detach().clamp(min=tiny) - x.detach())  # at least tiny, keeping the gradient


def _by_regime(fn_small, fn_large, small, *params):
    """Applies ``fn_small`` to the elements where ``small`` holds and ``fn_large`` to the
    others (flat tensors)."""
    out = minitorch.zeros_like(params[0])
    for fn, where in ((fn_small, small), (fn_large, ~small)):
        idx = _indices(where)
        if idx.numel():
            out[idx] = fn(*(p[idx] for p in params))
    return out


def _search(u, k, p, cdf, params, ratio, stop):
    """Sequential search of a discrete CDF from (k, pmf(k) = p, cdf(k)): the smallest k
    with u <= cdf(k), where pmf(k) = pmf(k - 1) * ratio(k, *params), or the first k where
    ``stop(k, pmf, cdf, *params)``. Continues on the unfinished elements alone once they
    are fewer than half."""
    while True:
        more = (u > cdf) & ~stop(k, p, cdf, *params)
        active = _indices(more)
        if active.numel() == 0:
            return k
        if 2 * active.numel() < u.numel():
            k = k.clone()
            k[active] = _search(u[active], k[active], p[active], cdf[active],
                                [q[active] for q in params], ratio, stop)
            return k
        k = k + more.to(k.dtype)
        p = p * ratio(k, *params)
        cdf = cdf + minitorch.where(more, p, 0.0)


def poisson(rate):
    """Poisson(rate) draws: inversion for rate < 10, Hormann's transformed rejection
    (PTRS) above; no gradient."""
    rate = rate.detach()
    return _flat(lambda r: _by_regime(_poisson_inversion, _poisson_ptrs, r < 10, r), rate)


def _poisson_inversion(rate):
    """Sequential search of the CDF with one uniform per element (rate < 10)."""
    eps = minitorch.finfo(rate.dtype).eps
    p = (-rate).exp()
    return _search(minitorch.rand_like(rate), minitorch.zeros_like(rate), p, p, [rate],
                   lambda k, r: r / k.clamp(min=1),
                   lambda k, p, cdf, r: (k > r) & (p < eps * cdf))


def _poisson_ptrs(rate):
    """Hormann (1993), 'The transformed rejection method for generating Poisson random
    variables', for rate >= 10."""
    slam = rate.sqrt()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_inv_alpha = (1.1239 + 1.1328 / (b - 3.4)).log()
    vr = 0.9277 - 3.6224 / (b - 2)

    def propose(rate, a, b, log_inv_alpha, vr):
        u = minitorch.rand_like(rate) - 0.5
        v = minitorch.rand_like(rate)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + rate + 0.43).floor()
        quick = (us >= 0.07) & (v <= vr)
        bound = -rate + k * rate.log() - minitorch.lgamma(k.clamp(min=0) + 1)
        slow = (k >= 0) & ~((us < 0.013) & (v > us)) & (
            v.log() + log_inv_alpha - (a / (us * us) + b).log() <= bound)
        return k, quick | slow

    return _rejection([rate, a, b, log_inv_alpha, vr], propose)


def binomial(count, prob):
    """Binomial(count, prob) draws: inversion when count * min(p, 1-p) < 10, BTRS
    (Hormann 1993) above; no gradient."""
    return _flat(_binomial, count.detach(), prob.detach())


def _binomial(count, prob):
    flip = prob > 0.5
    q = minitorch.where(flip, 1 - prob, prob)
    k = _by_regime(_binomial_inversion, _binomial_btrs, count * q < 10, count, q)
    return minitorch.where(flip, count - k, k)


def _binomial_inversion(n, q):
    """Sequential search of the CDF (q <= 1/2, n q < 10)."""
    p = (n * (-q).log1p()).exp()
    return _search(minitorch.rand_like(q), minitorch.zeros_like(q), p, p, [n, q / (1 - q)],
                   lambda k, n, odds: (n - k + 1) / k.clamp(min=1) * odds,
                   lambda k, p, cdf, n, odds: k >= n)


def _binomial_btrs(n, q):
    """Hormann's BTRS transformed rejection, for q <= 1/2 and n q >= 10."""
    spq = (n * q * (1 - q)).sqrt()
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q
    m = ((n + 1) * q).floor()
    params = [n, q, a, b, m,
              0.92 - 4.2 / b,  # vr
              ((2.83 + 5.1 / b) * spq).log(),  # log alpha
              minitorch.lgamma(m + 1) + minitorch.lgamma(n - m + 1)]  # h

    def propose(n, q, a, b, m, vr, log_alpha, h):
        u = minitorch.rand_like(q) - 0.5
        v = minitorch.rand_like(q)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + n * q + 0.5).floor()
        inside = (k >= 0) & (k <= n)
        quick = (us >= 0.07) & (v <= vr)
        kc = minitorch.minimum(k.clamp(min=0), n)
        log_odds = q.log() - (-q).log1p()
        bound = h - minitorch.lgamma(kc + 1) - minitorch.lgamma(n - kc + 1) + (kc - m) * log_odds
        slow = v.log() + log_alpha - (a / (us * us) + b).log() <= bound
        return k, inside & (quick | slow)

    return _rejection(params, propose)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) (torch.special.gammainc):
    its power series where x < a + 1, 1 - the continued fraction of Q(a, x) (modified
    Lentz) elsewhere, each summed until it converges to double precision. Differentiable
    through the tensor ops."""
    a, x = minitorch.broadcast_tensors(a, x)
    use_series = x < a + 1
    xs = minitorch.where(use_series, x, 0.0)
    xc = minitorch.where(use_series, a + 2, x)
    eps = minitorch.finfo(x.dtype).eps
    # series: P = x^a e^-x / Gamma(a + 1) * sum_n prod_{k<=n} x / (a + k)
    term = minitorch.ones_like(xs)
    total = minitorch.ones_like(xs)
    n = 0
    while True:
        n += 1
        term = term * xs / (a + n)
        total = total + term
        if not bool((term > eps * total).any()):
            break
    series = (a * xs.log() - xs - minitorch.lgamma(a + 1)).exp() * total
    # continued fraction of Q(a, x)
    tiny = 1e-300 if x.dtype == minitorch.float64 else 1e-30
    b = xc + 1 - a
    c = minitorch.full_like(xc, 1 / tiny)
    d = 1 / b
    h = d
    i = 0
    while True:
        i += 1
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = minitorch.where(d.abs() < tiny, tiny, d)
        c = b + an / c
        c = minitorch.where(c.abs() < tiny, tiny, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if not bool(((delta - 1).abs() > eps).any()):
            break
    upper = (a * xc.log() - xc - minitorch.lgamma(a)).exp() * h
    return minitorch.where(use_series, series, 1 - upper)
