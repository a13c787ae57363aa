#!/usr/bin/python3
"""Fits the polynomial coefficients of kernels/f32_vector_math.h (float exp and GELU).

Weighted least squares on Chebyshev-spaced points, reweighted towards the
minimax (Lawson) solution, against mpmath at 40 digits. Prints the
coefficients as the header spells them; the header's tests
(tests/kernels/f32_vector_test.cc) measure the float error they give.

  exp:  e^r = 1 + r + r^2 (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4),  |r| <= ln2 / 2
        (relative error)
  GELU: h(t) = Phi(-t) = erfc(t / sqrt 2) / 2 = exp(-t^2 / 2) S(s),  s = 1 / (1 + t / 4),
        S(s) = g0 + g1 s + ... + g9 s^9 for t in [0, 9] (relative error)

Needs Debian's python3-numpy and python3-mpmath: /usr/bin/python3 scripts/fit-f32-vector-math.py
numpy 1.24.2 and mpmath 1.2.1 gave the values in the header.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def lawson(basis, target, weight, iters=60):
    """Coefficients c minimizing max |(basis @ c - target) * weight|, approximately."""
    w = np.ones(len(target))
    for _ in range(iters):
        c, *_ = np.linalg.lstsq(basis * (w * weight)[:, None], target * w * weight, rcond=None)
        e = np.abs((basis @ c - target) * weight)
        w = w * np.sqrt(e / e.max() + 1e-12)
        w /= w.max()
    return c, e.max()


def main():
    half_ln2 = float(mp.log(2) / 2) * 1.0001  # a little beyond: the reduction rounds
    r = half_ln2 * np.cos(np.linspace(0, np.pi, 4000))
    e_r = np.array([float(mp.exp(x)) for x in r])
    basis = np.stack([r**k for k in range(2, 7)], axis=1)
    c, err = lawson(basis, e_r - 1 - r, 1 / e_r)
    print("// exp: relative error of the polynomial %.2e" % err)
    for k, v in enumerate(c, start=2):
        print("constexpr float kExpC%d = %.10ef;" % (k, np.float32(v)))

    t = 9 * (0.5 - 0.5 * np.cos(np.linspace(0, np.pi, 3000)))
    s = 1 / (1 + 0.25 * t)
    h = np.array([float(mp.erfc(mp.mpf(x) / mp.sqrt(2)) / 2 * mp.exp(mp.mpf(x) ** 2 / 2))
                  for x in t])
    basis = np.stack([s**k for k in range(0, 10)], axis=1)
    g, err = lawson(basis, h, 1 / h)
    print("// GELU: relative error of S on [0, 9] %.2e" % err)
    for k, v in enumerate(g):
        print("constexpr float kGeluG%d = %.10ef;" % (k, np.float32(v)))


if __name__ == "__main__":
    main()
