"""Small SVG charts for the benchmark pages, standard library only.

A LineChart draws series of (x, y) points on linear or logarithmic axes with
a legend; a BarChart draws labelled horizontal bars, grouped, on a linear or
logarithmic axis. Both return the SVG text from svg(). Used by
plot_frames.py (frame times and pairs), plot_bench.py (every chart of a
`sapling bench --json` file) and plot_demo_scaling.py.
"""

import math
from xml.sax.saxutils import escape

COLOURS = ["#1b9e3a", "#1f5fbf", "#d9541e", "#7b3fa0", "#b8860b", "#008b8b", "#c71585", "#556b2f", "#cd5c5c",
           "#4682b4", "#8b4513", "#2f4f4f"]
GREY = "#8c8c8c"


class Palette(dict):
    """A colour per name, given in order of first use: the same name keeps its colour across charts."""

    def __missing__(self, name):
        colour = COLOURS[len(self) % len(COLOURS)]
        self[name] = colour
        return colour


def log_log_slope(points):
    """The exponent a log-log chart shows: the least-squares slope of log(y) on log(x); None under 2 points."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx > 0 else None


def nice_step(span, ticks=6):
    """A round tick step (1, 2 or 5 times a power of ten) giving about `ticks` ticks over `span`."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power


def number_text(v):
    """1500 -> 1.5k, 2e6 -> 2M, 0.25 -> 0.25."""
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def text(x, y, s, anchor="middle", size=12, colour="#222", rotate=None):
    transform = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate is not None else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{colour}" text-anchor="{anchor}"'
            f'{transform}>{escape(str(s))}</text>')


def svg_open(width, height, title):
    """The opening of a chart: the svg element, a white page, the title."""
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
            f'<rect width="{width}" height="{height}" fill="white"/>', text(width / 2, 24, title, size=15)]


def polyline(points, colour, width, dash=None):
    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<polyline fill="none" stroke="{colour}" stroke-width="{width}"{dash_attr} '
            f'stroke-linejoin="round" points="{coords}"/>')


class Axis:
    """A map from data values to pixels over [lo, hi], linear or by powers of ten, with its ticks."""

    def __init__(self, values, log, pixel_lo, pixel_hi, include_zero=False):
        values = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
        self.log = log
        self.pixel_lo, self.pixel_hi = pixel_lo, pixel_hi
        if not values:
            values = [1.0]
        lo, hi = min(values), max(values)
        if log:
            self.lo = 10 ** math.floor(math.log10(lo))
            self.hi = 10 ** math.ceil(math.log10(hi))
            if self.hi <= self.lo:
                self.hi = self.lo * 10
        else:
            if include_zero:
                lo = min(lo, 0.0)
            step = nice_step(hi - lo if hi > lo else abs(hi) or 1.0)
            self.lo = step * math.floor(lo / step)
            self.hi = step * math.ceil(hi / step)
            if self.hi <= self.lo:
                self.hi = self.lo + step
            self.step = step

    def __call__(self, v):
        if self.log:
            t = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            t = (v - self.lo) / (self.hi - self.lo)
        return self.pixel_lo + t * (self.pixel_hi - self.pixel_lo)

    def ticks(self):
        if self.log:
            decades = round(math.log10(self.hi / self.lo))
            steps = (1, 2, 5) if decades <= 3 else (1,)
            out, v = [], self.lo
            while v <= self.hi * 1.0001:
                out.extend(m * v for m in steps if m * v <= self.hi * 1.0001)
                v *= 10
            return out
        out, v = [], self.lo
        while v <= self.hi + self.step * 1e-6:
            out.append(v)
            v += self.step
        return out


class LineChart:
    """Series of (x, y) points; `log_x`, `log_y` for logarithmic axes."""

    def __init__(self, title, x_label, y_label, log_x=False, log_y=False, width=900, height=480):
        self.title, self.x_label, self.y_label = title, x_label, y_label
        self.log_x, self.log_y = log_x, log_y
        self.width, self.height = width, height
        self.series = []  # (label, points, colour, dash, markers)
        self.bands = []  # (x_lo, x_hi, label): shaded ranges of x

    def line(self, label, points, colour=None, dash=None, markers=False):
        points = [(x, y) for x, y in points if (x > 0 or not self.log_x) and (y > 0 or not self.log_y)]
        if points:
            colour = colour or COLOURS[len(self.series) % len(COLOURS)]
            self.series.append((label, points, colour, dash, markers))

    def band(self, x_lo, x_hi, label):
        self.bands.append((x_lo, x_hi, label))

    def svg(self):
        left, right, top, bottom = 75, 30, 50, 60
        legend_h = 18 * len(self.series) + 10
        height = self.height + legend_h
        pw, ph = self.width - left - right, self.height - top - bottom
        xs = [x for _, pts, *_ in self.series for x, _ in pts]
        ys = [y for _, pts, *_ in self.series for _, y in pts]
        ax = Axis(xs, self.log_x, left, left + pw)
        ay = Axis(ys, self.log_y, top + ph, top, include_zero=not self.log_y)
        out = svg_open(self.width, height, self.title)
        for v in ay.ticks():
            y = ay(v)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e4e4e4"/>')
            out.append(text(left - 8, y + 4, number_text(v), anchor="end"))
        for v in ax.ticks():
            x = ax(v)
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#f0f0f0"/>')
            out.append(text(x, top + ph + 20, number_text(v)))
        for x_lo, x_hi, label in self.bands:
            out.append(f'<rect x="{ax(x_lo):.1f}" y="{top}" width="{ax(x_hi) - ax(x_lo):.1f}" height="{ph}" '
                       'fill="#f3f3d8" opacity="0.6"/>')
            out.append(text(ax(x_lo) + 4, top + 14, label, anchor="start", colour="#888"))
        out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
        out.append(text(left + pw / 2, top + ph + 45, self.x_label))
        out.append(text(20, top + ph / 2, self.y_label, rotate=-90))
        for label, pts, colour, dash, markers in self.series:
            out.append(polyline([(ax(x), ay(y)) for x, y in pts], colour, 1.6, dash))
            if markers:
                out.extend(f'<circle cx="{ax(x):.1f}" cy="{ay(y):.1f}" r="3" fill="{colour}"/>' for x, y in pts)
        y = self.height + 4
        for label, _, colour, dash, _ in self.series:
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<line x1="{left}" y1="{y - 4}" x2="{left + 24}" y2="{y - 4}" stroke="{colour}" '
                       f'stroke-width="2"{dash_attr}/>')
            out.append(text(left + 30, y, label, anchor="start"))
            y += 18
        out.append("</svg>")
        return "\n".join(out) + "\n"


class BarChart:
    """Horizontal bars in groups: add(group, label, value); `log` for a logarithmic value axis."""

    def __init__(self, title, value_label, log=False, width=900, reference=None, colours=None):
        self.title, self.value_label, self.log, self.width = title, value_label, log, width
        self.reference = reference  # a value marked by a vertical line (e.g. ratio 1)
        self.groups = {}  # group -> [(label, value, colour)]
        self.colour_of = colours if colours is not None else Palette()

    def add(self, group, label, value):
        if value is None or not math.isfinite(value) or (self.log and value <= 0):
            return
        self.groups.setdefault(group, []).append((label, value, self.colour_of[label]))

    def svg(self):
        left, right, top = 260, 80, 50
        bar_h, gap = 14, 12
        rows = sum(len(b) for b in self.groups.values())
        ph = rows * bar_h + gap * len(self.groups)
        height = top + ph + 60
        pw = self.width - left - right
        values = [v for bars in self.groups.values() for _, v, _ in bars]
        if self.reference is not None:
            values.append(self.reference)
        ax = Axis(values, self.log, left, left + pw, include_zero=not self.log)
        out = svg_open(self.width, height, self.title)
        for v in ax.ticks():
            x = ax(v)
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#e4e4e4"/>')
            out.append(text(x, top + ph + 18, number_text(v)))
        base = ax(ax.lo) if self.log else ax(max(ax.lo, 0.0))
        y = top
        for group, bars in self.groups.items():
            out.append(text(8, y + 11, group, anchor="start", size=12, colour="#000"))
            y += gap
            for label, value, colour in bars:
                x = ax(value)
                out.append(f'<rect x="{min(base, x):.1f}" y="{y:.1f}" width="{abs(x - base):.1f}" height="{bar_h - 3}" '
                           f'fill="{colour}"/>')
                out.append(text(left - 6, y + bar_h - 5, label, anchor="end", size=11))
                out.append(text(max(base, x) + 4, y + bar_h - 5, f"{value:.3g}", anchor="start", size=10))
                y += bar_h
        if self.reference is not None:
            x = ax(self.reference)
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#444" stroke-dasharray="4 3"/>')
        out.append(text(left + pw / 2, top + ph + 42, self.value_label))
        out.append("</svg>")
        return "\n".join(out) + "\n"
