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
