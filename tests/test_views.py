"""Views: ops that change shape / strides / offset and share storage with their base.

Results are compared with NumPy's for the same operation, and sharing is checked the
way a user sees it: a write through the view is visible in the base (and the other way
round), while a copy is independent.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
from conftest import DEVICES, LAYOUTS, assert_tensor_equal, nonempty_shapes, shapes, to_numpy


def _base(shape, dtype=np.float64):
    """Distinct values, so any misplaced element shows."""
    return np.arange(math.prod(shape), dtype=dtype).reshape(shape) + 1


def paired(shape, how, device="cpu"):
    """(NumPy array, minitorch tensor) with equal values and the same kind of strides."""
    if how == "contiguous":
        arr = _base(shape)
        return arr, minitorch.tensor(arr, device=device)
    if how == "step":
        big_shape = tuple(2 * s + 1 for s in shape)
        big = _base(big_shape)
        idx = tuple(slice(1, None, 2) for _ in shape)
        return big[idx], minitorch.tensor(big, device=device)[idx]
    if how == "transpose":
        rev = tuple(range(len(shape)))[::-1]
        stored = _base(tuple(shape[d] for d in rev))
        return stored.transpose(rev), minitorch.tensor(stored, device=device).permute(*rev)
    raise ValueError(how)


def _shares_storage(view, base):
    """True when writing into ``view`` changes ``base`` (both non-empty)."""
    before = to_numpy(base)
    view.fill_(-12345)
    return not np.array_equal(to_numpy(base), before)


@st.composite
def reshape_targets(draw, shape):
    """A shape with the same number of elements (maybe with one -1)."""
    numel = math.prod(shape)
    if numel == 0:
        target = list(draw(shapes(min_dims=1, max_dims=4)).__iter__())
        if 0 not in target:
            target[draw(st.integers(0, len(target) - 1))] = 0
        return tuple(target)
    target, rest = [], numel
    while rest > 1 and len(target) < 4:
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        target.append(d)
        rest //= d
    target.append(rest)
    if draw(st.booleans()):  # sprinkle size-1 dims
        target.insert(draw(st.integers(0, len(target))), 1)
    target = tuple(draw(st.permutations(target)))
    if draw(st.booleans()):
        i = draw(st.integers(0, len(target) - 1))
        target = target[:i] + (-1,) + target[i + 1 :]
    return target


# ----------------------------------------------------------- view/reshape ----

@pytest.mark.parametrize("device", DEVICES)
@given(data=st.data(), shape=shapes(), how=st.sampled_from(LAYOUTS))
def test_view_is_possible_exactly_when_numpy_can_reshape_without_copy(device, data, shape, how):
    arr, t = paired(shape, how, device)
    target = data.draw(reshape_targets(shape))
    try:
        expected = arr.reshape(target, copy=False)
    except ValueError:
        expected = None
    if expected is None and arr.size > 0:
        with pytest.raises(ValueError, match=r"view.*reshape"):
            t.view(target)
        return
    v = t.view(*target) if data.draw(st.booleans()) else t.view(target)
    want = arr.reshape(target)
    assert tuple(v.shape) == want.shape
    np.testing.assert_array_equal(to_numpy(v), want)
    assert v.data_ptr() == t.data_ptr() or arr.size == 0
    if arr.size:
        assert _shares_storage(v, t)


@pytest.mark.parametrize("device", DEVICES)
@given(data=st.data(), shape=shapes(), how=st.sampled_from(LAYOUTS))
def test_reshape_views_when_possible_and_copies_otherwise(device, data, shape, how):
    arr, t = paired(shape, how, device)
    target = data.draw(reshape_targets(shape))
    try:
        arr.reshape(target, copy=False)
        viewable = True
    except ValueError:
        viewable = False
    r = t.reshape(target)
    np.testing.assert_array_equal(to_numpy(r), arr.reshape(target))
    if arr.size == 0:
        return
    if viewable:
        assert _shares_storage(r, t)
    else:
        assert r.is_contiguous()
        before = to_numpy(t)
        r.fill_(-1)
        np.testing.assert_array_equal(to_numpy(t), before)  # an independent copy


@pytest.mark.parametrize("device", DEVICES)
def test_view_with_minus_one(device):
    t = minitorch.tensor(_base((2, 3, 4)), device=device)
    assert tuple(t.view(-1).shape) == (24,)
    assert tuple(t.view(4, -1).shape) == (4, 6)
    assert tuple(t.view(2, -1, 3).shape) == (2, 4, 3)
    np.testing.assert_array_equal(t.view(-1, 8).cpu().numpy(), _base((2, 3, 4)).reshape(-1, 8))
    assert tuple(minitorch.zeros(0, 3, device=device).view(-1, 3).shape) == (0, 3)
    z = minitorch.full((), 7.0, device=device)
    assert tuple(z.view(1).shape) == (1,) and tuple(z.view(-1).shape) == (1,)
    assert tuple(minitorch.ones(1, 1, device=device).view(()).shape) == ()


@pytest.mark.parametrize("device", DEVICES)
def test_view_on_transposed_raises_suggesting_reshape(device):
    t = minitorch.tensor(_base((3, 4)), device=device).T
    with pytest.raises(ValueError, match=r"view: size \(12,\) is not compatible .*use \.reshape"):
        t.view(12)
    np.testing.assert_array_equal(t.reshape(12).cpu().numpy(), _base((3, 4)).T.reshape(12))


# -------------------------------------------------------- permute & co. ----

@pytest.mark.parametrize("device", DEVICES)
@given(data=st.data(), shape=shapes(), how=st.sampled_from(LAYOUTS))
def test_permute_and_transpose(device, data, shape, how):
    arr, t = paired(shape, how, device)
    n = len(shape)
    perm = data.draw(st.permutations(range(n)))
    perm_neg = [p - n if data.draw(st.booleans()) else p for p in perm]
    p = t.permute(*perm_neg)
    np.testing.assert_array_equal(to_numpy(p), arr.transpose(perm))
    assert p.stride() == tuple(t.stride()[d] for d in perm)
    assert tuple(t.permute(perm).shape) == arr.transpose(perm).shape
    d0, d1 = data.draw(st.integers(-n, n - 1)), data.draw(st.integers(-n, n - 1))
    np.testing.assert_array_equal(to_numpy(t.transpose(d0, d1)), np.swapaxes(arr, d0, d1))
    np.testing.assert_array_equal(to_numpy(t.T), arr.T)
    if arr.size:
        assert _shares_storage(t.transpose(d0, d1), t)


@pytest.mark.parametrize("device", DEVICES)
def test_t_and_T_and_mT(device):
    a = _base((3, 4))
    t = minitorch.tensor(a, device=device)
    assert_tensor_equal(t.t(), a.T)
    assert_tensor_equal(t.T, a.T)
    assert t.T.stride() == (1, 4) and not t.T.is_contiguous()
    v = minitorch.tensor(_base((5,)), device=device)
    assert_tensor_equal(v.t(), _base((5,)))
    b = _base((2, 3, 4))
    tb = minitorch.tensor(b, device=device)
    assert_tensor_equal(tb.mT, np.swapaxes(b, -1, -2))
    assert_tensor_equal(tb.T, b.T)
    with pytest.raises(ValueError, match=r"t: expects a tensor with <= 2 dimensions"):
        tb.t()


# ----------------------------------------------------------------- expand ----

@pytest.mark.parametrize("device", DEVICES)
@given(data=st.data(), shape=shapes(max_dims=3), how=st.sampled_from(LAYOUTS))
def test_expand_matches_broadcast_to(device, data, shape, how):
    arr, t = paired(shape, how, device)
    # a target: size-1 dims may grow, others stay (or are given as -1), new leading dims
    target = [data.draw(st.sampled_from([1, 3])) if s == 1 else data.draw(st.sampled_from([s, -1])) for s in shape]
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    target = lead + target
    e = t.expand(*target)
    want = np.broadcast_to(arr, tuple(lead) + tuple(s if g == -1 else g for s, g in zip(shape, target[len(lead):])))
    np.testing.assert_array_equal(to_numpy(e), want)
    for d, (s_new, s_old) in enumerate(zip(e.shape[len(lead):], shape)):
        if s_old == 1 and s_new != 1:
            assert e.stride(d + len(lead)) == 0
    for d in range(len(lead)):
        assert e.stride(d) == 0


@pytest.mark.parametrize("device", DEVICES)
def test_expand_shares_memory(device):
    base = minitorch.tensor(np.array([[1.0], [2.0]]), device=device)
    e = base.expand(2, 3)
    assert e.stride() == (1, 0)
    base[1, 0] = 9.0
    np.testing.assert_array_equal(e.cpu().numpy(), [[1, 1, 1], [9, 9, 9]])
    assert_tensor_equal(base.expand_as(minitorch.zeros(4, 2, 3)), np.broadcast_to([[1.0], [9.0]], (4, 2, 3)))


# --------------------------------------------------- (un)squeeze & flatten ----

@pytest.mark.parametrize("device", DEVICES)
@given(data=st.data(), shape=shapes(), how=st.sampled_from(LAYOUTS))
def test_unsqueeze_squeeze(device, data, shape, how):
    arr, t = paired(shape, how, device)
    n = len(shape)
    d = data.draw(st.integers(-n - 1, n))
    u = t.unsqueeze(d)
    np.testing.assert_array_equal(to_numpy(u), np.expand_dims(arr, d))
    np.testing.assert_array_equal(to_numpy(u.squeeze(d)), arr)
    np.testing.assert_array_equal(to_numpy(t.squeeze()), np.squeeze(arr))
    k = data.draw(st.integers(-n, n - 1))
    expected = np.squeeze(arr, k) if shape[k] == 1 else arr  # a non-1 dim is left alone
    np.testing.assert_array_equal(to_numpy(t.squeeze(k)), expected)
    if arr.size:
        assert _shares_storage(u, t)


@pytest.mark.parametrize("device", DEVICES)
def test_squeeze_dims_tuple(device):
    t = minitorch.zeros(1, 3, 1, 2, device=device)
    assert tuple(t.squeeze((0, 2)).shape) == (3, 2)
    assert tuple(t.squeeze((0, 1)).shape) == (3, 1, 2)
    assert tuple(t.squeeze().shape) == (3, 2)


@pytest.mark.parametrize("device", DEVICES)
@given(data=st.data(), shape=shapes(), how=st.sampled_from(LAYOUTS))
def test_flatten(device, data, shape, how):
    arr, t = paired(shape, how, device)
    n = len(shape)
    start = data.draw(st.integers(0, n - 1))
    end = data.draw(st.integers(start, n - 1))
    f = t.flatten(start - n if data.draw(st.booleans()) else start, end)
    want_shape = shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :]
    np.testing.assert_array_equal(to_numpy(f), arr.reshape(want_shape))
    np.testing.assert_array_equal(to_numpy(t.flatten()), arr.reshape(-1))


# --------------------------------------------------------------- indexing ----

def _no_negative_steps(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return all(not (isinstance(i, slice) and i.step is not None and i.step < 0) for i in items)


@st.composite
def shape_and_index(draw):
    shape = draw(shapes(max_dims=3))
    idx = draw(
        hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True).filter(_no_negative_steps)
    )
    return shape, idx


@pytest.mark.parametrize("device", DEVICES)
@given(si=shape_and_index(), how=st.sampled_from(LAYOUTS))
def test_indexing_matches_numpy(device, si, how):
    shape, idx = si
    arr, t = paired(shape, how, device)
    v = t[idx]
    want = np.asarray(arr[idx])
    assert tuple(v.shape) == want.shape, (idx, v.shape, want.shape)
    np.testing.assert_array_equal(to_numpy(v), want)


@pytest.mark.parametrize("device", DEVICES)
@given(si=shape_and_index(), how=st.sampled_from(LAYOUTS))
def test_write_through_an_index_view_reaches_the_base(device, si, how):
    shape, idx = si
    arr, t = paired(shape, how, device)
    arr = arr.copy()
    v = t[idx]
    v += 1000  # in place on the view
    arr[idx] += 1000
    np.testing.assert_array_equal(to_numpy(t), arr)
    t[idx] = -7.0  # __setitem__ with a number
    arr[idx] = -7.0
    np.testing.assert_array_equal(to_numpy(t), arr)


@pytest.mark.parametrize("device", DEVICES)
def test_indexing_named_cases(device):
    a = _base((4, 5, 6))
    t = minitorch.tensor(a, device=device)
    for idx in [
        1,
        -1,
        (1, 2),
        (-1, -2, -3),
        (1, 2, 3),
        slice(1, 3),
        (slice(None), 2),
        (slice(None, None, 2), slice(1, None, 3)),
        (Ellipsis, 1),
        (1, Ellipsis),
        (None, 1),
        (slice(None), None, 1, None),
        (Ellipsis, None),
        (slice(-3, -1), slice(10, 20)),  # out-of-range slice bounds clamp
        (slice(3, 1),),  # empty
        Ellipsis,
        (np.int64(2), slice(None)),
    ]:
        got = t[idx]
        want = np.asarray(a[idx])
        assert tuple(got.shape) == want.shape, idx
        np.testing.assert_array_equal(got.cpu().numpy(), want, err_msg=str(idx))
    assert t[...] is not t
    assert t[minitorch.full((), 2, dtype=minitorch.int64)].cpu().numpy().tolist() == a[2].tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_index_strides_and_offsets(device):
    a = _base((4, 5, 6))
    t = minitorch.tensor(a, device=device)
    assert t.stride() == (30, 6, 1) and t.storage_offset() == 0
    v = t[1, 2:, ::2]
    assert v.stride() == (6, 2)
    assert v.storage_offset() == 1 * 30 + 2 * 6
    assert v.data_ptr() - t.data_ptr() == v.storage_offset() * 8
    s = t[:, 3]
    assert s.stride() == (30, 1) and s.storage_offset() == 18
    assert s.data_ptr() - t.data_ptr() == 18 * 8
    f32 = minitorch.tensor(_base((3, 4)).astype(np.float32), device=device)
    assert f32[2, 1].data_ptr() - f32.data_ptr() == 9 * 4
    assert f32.stride(0) == 4 and f32.stride(-1) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_writes_through_views_reach_the_base(device):
    a = _base((3, 4))
    t = minitorch.tensor(a, device=device)
    row = t[1]
    row += 1
    a[1] += 1
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    t[0, 1:] = 5
    a[0, 1:] = 5
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    t[:, 2].fill_(3)
    a[:, 2] = 3
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    t.T[3].zero_()
    a.T[3] = 0
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    t.view(12)[5] = -1
    a.reshape(12)[5] = -1
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    # and the other way round: a write into the base shows in an older view
    col = t[:, 0]
    t.mul_(2)
    np.testing.assert_array_equal(col.cpu().numpy(), 2 * a[:, 0])


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_with_tensors_lists_and_overlap(device):
    a = _base((3, 4))
    t = minitorch.tensor(a, device=device)
    t[1] = minitorch.tensor(np.array([10.0, 20.0, 30.0, 40.0]), device=device)
    a[1] = [10, 20, 30, 40]
    t[:, 0] = [7.0, 8.0, 9.0]
    a[:, 0] = [7, 8, 9]
    t[2:] = minitorch.tensor(np.array([[0.5, 0.5, 0.5, 0.5]]), device=device)
    a[2:] = 0.5
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    t[1:] = t[:-1]  # overlapping source and destination: reads the old values
    a[1:] = a[:-1].copy()
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    t[:, 1] = t[:, 3]
    a[:, 1] = a[:, 3]
    np.testing.assert_array_equal(t.cpu().numpy(), a)


# ----------------------------------------------------- contiguous & clone ----

@pytest.mark.parametrize("device", DEVICES)
@given(shape=nonempty_shapes(), how=st.sampled_from(LAYOUTS))
def test_contiguous_and_clone(device, shape, how):
    arr, t = paired(shape, how, device)
    c = t.contiguous()
    assert c.is_contiguous()
    np.testing.assert_array_equal(to_numpy(c), arr)
    # NumPy's flag ignores size-1 dims and empty arrays too: the same definition.
    assert t.is_contiguous() == arr.flags.c_contiguous
    if t.is_contiguous():
        assert c.data_ptr() == t.data_ptr()  # no copy needed
    else:
        assert c.data_ptr() != t.data_ptr()
        assert not _shares_storage(c, t)
    k = t.clone()
    np.testing.assert_array_equal(to_numpy(k), arr)
    assert k.data_ptr() != t.data_ptr()
    k.fill_(-1)
    np.testing.assert_array_equal(to_numpy(t), arr)  # clone is independent


@pytest.mark.parametrize("device", DEVICES)
def test_is_contiguous_cases(device):
    t = minitorch.zeros(3, 4, device=device)
    assert t.is_contiguous()
    assert not t.T.is_contiguous()
    assert t[1:].is_contiguous()  # an offset alone keeps it contiguous
    assert not t[:, 1:].is_contiguous()
    assert not t[::2].is_contiguous()
    assert not t[:, :1].is_contiguous() and not t[:, :1].T.is_contiguous()
    assert t.unsqueeze(0).is_contiguous()
    assert not t.unsqueeze(2).expand(3, 4, 2).is_contiguous()
    assert minitorch.zeros(1, 5, device=device).T.is_contiguous()  # size-1 dims don't count
    assert minitorch.zeros(0, 5, device=device).T.is_contiguous()  # no elements: trivially contiguous


@pytest.mark.parametrize("device", DEVICES)
def test_detach_is_a_view(device):
    t = minitorch.tensor(_base((2, 2)), device=device)
    d = t.detach()
    assert d is not t and d.data_ptr() == t.data_ptr()
    d[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
