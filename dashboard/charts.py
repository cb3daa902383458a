"""Small charts drawn on the server as SVG: no script, no CDN, readable without either."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

WIDTH, HEIGHT, GAP = 120, 28, 1


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    day: date
    count: int


def daily_bars(counts: list[int], first_day: date) -> list[Bar]:
    """One bar a day, scaled to the busiest day; a day with none keeps a 1-pixel baseline so
    the days stay countable."""
    if not counts:
        return []
    peak = max(counts) or 1
    slot = WIDTH / len(counts)
    bars = []
    for index, count in enumerate(counts):
        height = max(1.0, round(HEIGHT * count / peak, 1))
        bars.append(Bar(round(index * slot, 2), round(HEIGHT - height, 1), round(slot - GAP, 2),
                        height, first_day + timedelta(days=index), count))
    return bars


# The form page's chart: 30 days with a count axis and a day axis, drawn to scale in a
# viewBox, so it shrinks to a phone's width with its labels.
CHART_WIDTH, CHART_HEIGHT = 640, 180
LEFT, BOTTOM, TOP, RIGHT = 40, 26, 12, 24


@dataclass(frozen=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    counts: list[Tick]  # the count axis: y positions and their numbers
    days: list[Tick]  # the day axis: x positions and their dates
    total: int
    peak: int
    first_day: date
    last_day: date
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT
    left: int = LEFT
    base: int = CHART_HEIGHT - BOTTOM
    right: int = CHART_WIDTH - RIGHT


def _count_ticks(peak: int) -> list[int]:
    if peak <= 4:
        return list(range(peak + 1))
    step = -(-peak // 4)
    return list(range(0, step * 4 + 1, step))


def daily_chart(counts: list[int], first_day: date) -> Chart:
    """Bars for ``counts`` (one a day from ``first_day``), a count axis from 0 to the busiest
    day rounded up, and a date every week along the bottom."""
    top_count = _count_ticks(max(counts, default=0) or 1)[-1]
    plot_height = CHART_HEIGHT - BOTTOM - TOP
    slot = (CHART_WIDTH - LEFT - RIGHT) / max(1, len(counts))
    base = CHART_HEIGHT - BOTTOM
    bars = []
    for index, count in enumerate(counts):
        height = round(plot_height * count / top_count, 1)
        bars.append(Bar(round(LEFT + index * slot + 1, 2), round(base - height, 1),
                        round(slot - 2, 2), height, first_day + timedelta(days=index), count))
    counts_axis = [Tick(round(base - plot_height * value / top_count, 1), str(value))
                   for value in _count_ticks(top_count)]
    days_axis = [Tick(round(LEFT + index * slot + slot / 2, 1),
                      (first_day + timedelta(days=index)).strftime("%b %-d"))
                 for index in range(0, len(counts), 7)]
    return Chart(bars, counts_axis, days_axis, sum(counts), max(counts, default=0), first_day,
                 first_day + timedelta(days=max(0, len(counts) - 1)))
