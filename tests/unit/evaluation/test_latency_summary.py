"""latency_summary: nearest-rank percentiles (the ⌈p/100 · n⌉-th smallest sample) and the mean."""

from __future__ import annotations

import random

from toolsift.evaluation.runner import latency_summary


def test_no_samples_give_an_empty_summary() -> None:
    assert latency_summary([]) == {}


def test_one_hundred_samples_give_the_sample_at_each_rank() -> None:
    samples = [float(i) for i in range(1, 101)]
    random.Random(7).shuffle(samples)  # order of arrival does not matter

    # nearest rank: p50 → 50th, p95 → 95th, p99 → 99th; an interpolating percentile would give 50.5
    assert latency_summary(samples) == {"p50": 50.0, "p95": 95.0, "p99": 99.0, "mean": 50.5, "n": 100}


def test_twenty_samples() -> None:
    samples = [float(i) for i in range(20, 0, -1)]

    # ⌈0.5·20⌉ = 10, ⌈0.95·20⌉ = 19, ⌈0.99·20⌉ = ⌈19.8⌉ = 20
    assert latency_summary(samples) == {"p50": 10.0, "p95": 19.0, "p99": 20.0, "mean": 10.5, "n": 20}


def test_ten_samples_round_ranks_up() -> None:
    samples = [12.0, 3.0, 40.0, 7.0, 25.0, 1.0, 9.0, 100.0, 18.0, 5.0]
    # sorted: 1 3 5 7 9 12 18 25 40 100
    # ⌈5⌉ = 5th → 9; ⌈9.5⌉ = 10th → 100; ⌈9.9⌉ = 10th → 100; mean 220 / 10 = 22

    assert latency_summary(samples) == {"p50": 9.0, "p95": 100.0, "p99": 100.0, "mean": 22.0, "n": 10}


def test_three_samples() -> None:
    # ⌈1.5⌉ = 2nd → 20; ⌈2.85⌉ = ⌈2.97⌉ = 3rd → 30
    assert latency_summary([30.0, 10.0, 20.0]) == {"p50": 20.0, "p95": 30.0, "p99": 30.0, "mean": 20.0, "n": 3}


def test_a_single_sample_is_every_percentile() -> None:
    assert latency_summary([4.2]) == {"p50": 4.2, "p95": 4.2, "p99": 4.2, "mean": 4.2, "n": 1}


def test_values_are_rounded_to_hundredths_of_a_millisecond() -> None:
    summary = latency_summary([1.004, 2.0, 3.333])

    assert summary["p50"] == 2.0
    assert summary["p99"] == 3.33
    assert summary["mean"] == 2.11  # 6.337 / 3 = 2.11233…
